// Package scale holds the scale-out benchmarks of issue #14: bolt + files
// and PostgreSQL + S3 side by side in one run, on real `chartctl serve`
// processes (the binary built from this module), a real PostgreSQL
// (internal/testkit/pgtest: Debian's binaries) and a real S3 server
// (internal/testkit/s3test: versitygw):
//
//	go test -run '^$' -bench . -benchtime 200x -timeout 60m ./bench/scale
//
// The benchmarks:
//
//   - BenchmarkUpload: one pusher on one server.
//   - BenchmarkIndexYAML: index.yaml of 1,000 versions, 16 concurrent
//     readers.
//   - BenchmarkPushers: 16 concurrent pushers on one bolt node, or spread
//     over three replicas on one database and bucket.
//   - BenchmarkLargeRepository: a repository of 100,000 versions
//     (CHARTCTL_BENCH_LARGE_N): start-up time and chart list pages.
//   - BenchmarkOCIPush: chart versions pushed in turn through /v1 and over
//     OCI with the requests `helm push oci://` sends (issue #13), corpus
//     charts and minimal ones; reports the ratio oci/v1.
//   - BenchmarkPushedRepository: issue #32's server side, 100,000
//     versions pushed through the binary, then list, search, start-up and
//     the first index.yaml (CHARTCTL_BENCH_PUSHED_*; bolt + files over
//     HTTPS when CHARTCTL_BENCH_PUSHED_MODES names bolt+files+tls).
//   - BenchmarkQuotaPush: pushes into a filled repository without and
//     with a max_bytes quota (CHARTCTL_BENCH_QUOTA_FILL).
//
// The package has only benchmarks: `go test ./...` compiles them and runs
// nothing. docs/performance.md reports a run and how to read it.
package scale

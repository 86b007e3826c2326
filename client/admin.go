package client

import (
	"context"
	"io"
	"net/http"
)

// AdminService takes backups and verifies the server's store (server
// admins with every scope only).
type AdminService service

// BackupMediaType is the media type of a backup archive.
const BackupMediaType = "application/vnd.chartctl.backup.v1.tar"

// VerifyProblem is one thing wrong with a store or a backup.
type VerifyProblem struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Detail string `json:"detail"`
}

// VerifyChecked counts what a verification looked at.
type VerifyChecked struct {
	Repositories  int   `json:"repositories"`
	ChartVersions int   `json:"chart_versions"`
	Blobs         int   `json:"blobs"`
	Bytes         int64 `json:"bytes"`
}

// VerifyResult is the answer of POST /v1/admin/verify.
type VerifyResult struct {
	OK       bool            `json:"ok"`
	Checked  VerifyChecked   `json:"checked"`
	Problems []VerifyProblem `json:"problems"`
}

// Backup streams a consistent backup of the server into w
// (GET /v1/admin/backup). A failure on the server after the archive began
// cuts it short; check it with the backup's reader before trusting it.
func (s *AdminService) Backup(ctx context.Context, w io.Writer) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, "v1/admin/backup", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", BackupMediaType)
	return s.client.Do(ctx, req, w)
}

// Verify checks the server's live store and blobs (POST /v1/admin/verify).
func (s *AdminService) Verify(ctx context.Context) (*VerifyResult, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, "v1/admin/verify", nil)
	if err != nil {
		return nil, nil, err
	}
	out := new(VerifyResult)
	resp, err := s.client.Do(ctx, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

package chartctl

import (
	"context"
	"time"
)

// BlobClaimStore keeps the deletion of unreferenced blobs from racing the
// commit of a record that refers to the same blob, across every process
// sharing the store. Blobs are content-addressed, so an upload on one
// replica may commit the very blob another replica is deleting as an
// orphan; without coordination the upload's record could end up committed
// beside a deleted blob.
//
// The protocol: a writer claims the digests it is about to refer to before
// committing their blobs, commits the blobs and then the record, and
// releases the claims. A deleter deletes only through
// DeleteUnreferencedBlob, which runs only when no record refers to the
// digest and no claim on it lasts, and which excludes claims of the same
// digest while it runs. So either the claim comes first (and the deletion
// is skipped), or the deletion finishes before the claim returns (and the
// writer's commit stores the blob afresh).
type BlobClaimStore interface {
	// ClaimBlobs claims digests for holder (a unique id per writer) until
	// ttl from now, or until ReleaseBlobClaims. It waits for a
	// DeleteUnreferencedBlob of any of them that is under way to finish.
	// Claims of the same digest by different holders do not exclude each
	// other. Malformed digests, which no blob can have, are ignored.
	ClaimBlobs(ctx context.Context, holder string, digests []string, ttl time.Duration) error
	// ReleaseBlobClaims ends holder's claims on digests; claims that lapsed
	// or that another holder has are left alone.
	ReleaseBlobClaims(ctx context.Context, holder string, digests []string) error
	// DeleteUnreferencedBlob calls del when no record refers to digest and
	// no claim on it lasts, and reports what del reported. del deletes the
	// blob (it may decline, for example a blob younger than a grace
	// period, by reporting false); ClaimBlobs of digest wait until it
	// returns. A del error is returned as is.
	DeleteUnreferencedBlob(ctx context.Context, digest string, del func(ctx context.Context) (bool, error)) (bool, error)
}

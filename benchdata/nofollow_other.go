//go:build !unix

package benchdata

// oNoFollow is none where the system has no O_NOFOLLOW: the Lstat before
// the open still refuses a link found there.
const oNoFollow = 0

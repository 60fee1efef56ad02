//go:build !unix

package scaffold

// oNoFollow is none where the system has no O_NOFOLLOW: O_EXCL still
// refuses a link at the file, and Init's checks one on the way.
const oNoFollow = 0

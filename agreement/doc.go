// Package agreement decides whether two responses to the same request agree.
//
// It backs the agreement check that runs before any load: a faster candidate
// that answers differently must never pass. The package is pure (no network,
// no clock). Bodies are compared as data according to their format: JSON
// structurally (key order ignored, numbers compared exactly), text and CSV by
// line, XML as a normalised token stream. A disagreement is a Result, not an
// error, and names the first difference (path, reason, raw excerpts of both
// bodies) so that a report can show why the gate failed; the excerpts come
// from a pull request, and callers escape them for their medium.
package agreement

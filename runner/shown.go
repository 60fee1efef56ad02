package runner

// What benchgate stores of a run and shows of it (results.json, from which
// the report, the comment, the job summary and the annotations are made;
// the progress lines; the error of a failed run) holds text a target wrote
// and text of the requests. The first is capped where it is stored (see
// target.CapText), the second redacted (see target.Redactor); redaction
// comes before the cap, so a cut never leaves part of a secret. These are
// the caps of what the agreement probe stores.
const (
	// maxReason bounds a Disagreement's Reason; maxSideError each
	// side's "request failed" error in it, so that both fit whole, with
	// the side's name and the marker of a cut.
	maxReason    = 512
	maxSideError = 192
	// maxPath bounds a Disagreement's Path (JSON keys come from the
	// target).
	maxPath = 512
	// maxExcerpt bounds each answer's excerpt; agreement already cuts
	// them to agreement.ExcerptRunes runes, which this never cuts.
	maxExcerpt = 1 << 10
	// maxTarget bounds a request's path and query as stored.
	maxTarget = 1 << 10
)

package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestJSONDocument(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := JSON(&b, fullInput()); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("}\n")) {
		t.Error("document does not end in a newline")
	}
	var doc struct {
		Version  int
		Outcome  string
		Scenario struct {
			Name string
			Seed uint64
		}
		Rounds struct{ Decided, Planned int }
		Cells  []struct {
			Cell struct {
				Variant, Class string
				Concurrency    int
			}
			Verdict   string
			Decisions []struct {
				Metric    string
				Delta     float64
				Candidate struct {
					N         int
					HalfWidth float64 `json:"half_width"`
				}
			}
			Candidate struct{ Errors int64 }
		}
		Failures []struct{ Kind string }
		Policy   struct {
			MaxErrorRate *float64 `json:"max_error_rate"`
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("version", doc.Version, JSONVersion)
	check("outcome", doc.Outcome, "fail")
	check("scenario", doc.Scenario.Name, "demo-api")
	check("seed", doc.Scenario.Seed, uint64(424242))
	check("rounds", doc.Rounds.Decided, 3)
	check("cells", len(doc.Cells), 5)
	check("cell 1 verdict", doc.Cells[1].Verdict, "regression")
	check("cell 1 class", doc.Cells[1].Cell.Class, "Q01")
	check("cell 1 rps half-width", doc.Cells[1].Decisions[0].Candidate.HalfWidth, 41.8)
	check("cell 4 candidate errors", doc.Cells[4].Candidate.Errors, int64(12))
	check("failures", len(doc.Failures), 3)
	if doc.Policy.MaxErrorRate == nil || *doc.Policy.MaxErrorRate != 0.001 {
		t.Errorf("max_error_rate = %v", doc.Policy.MaxErrorRate)
	}

	// A disabled error check is null, not a negative number a reader
	// might compare against.
	b.Reset()
	if err := JSON(&b, cancelledInput()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"max_error_rate": null`)) {
		t.Error("disabled max_error_rate is not null")
	}
}

// TestEmptyInput: the zero Input renders in every format without panicking,
// and JSON lists are empty, not null.
func TestEmptyInput(t *testing.T) {
	t.Parallel()
	for _, f := range Formats {
		r, err := ForFormat(f, Input{}, TerminalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := r(&b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f != "json" {
			continue
		}
		for _, want := range []string{`"cells": []`, `"failures": []`, `"fail_on": []`} {
			if !bytes.Contains(b.Bytes(), []byte(want)) {
				t.Errorf("empty JSON lacks %s:\n%s", want, b.Bytes())
			}
		}
	}
	if _, err := ForFormat("html", Input{}, TerminalOptions{}); err == nil {
		t.Error("ForFormat(html) did not fail")
	}
}

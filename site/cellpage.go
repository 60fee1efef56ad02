package site

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// cellsDir is the folder of the site holding the cells' pages.
const cellsDir = "cells"

// CellPage is the path, relative to the site's root, of the page of the
// cell c of scenario: "cells/SLUG-HASH.html". A link to it is the site's
// address, a "/", and this path (e.g. a PR comment's
// dashboard-url + "/" + CellPage(scenario, cell)).
//
// The path depends on the scenario's name and the cell only (its pin set,
// variant, class, concurrency and rate), not on the profile or the
// machine, which are sections of the page: a cell keeps its page as
// runners and profiles come and go. SLUG is the scenario and the cell's
// name in lower-case ASCII letters, digits and '-', at most 48 bytes, for
// a person reading the URL; HASH is the first 12 hex digits of the
// SHA-256 of the scenario and every field of the cell, so two distinct
// cells never share a page (names that reduce to the same slug, or differ
// only in case, differ in their hash). The path needs no escaping in a
// URL or a file system, and is the same on every platform and in every
// version of benchgate: links in old comments stay good.
func CellPage(scenario string, c benchdata.Cell) string {
	return cellsDir + "/" + cellSlug(scenario, c) + "-" + cellHash(scenario, c) + ".html"
}

// slugBytes caps a page name's readable part.
const slugBytes = 48

func cellSlug(scenario string, c benchdata.Cell) string {
	return textsafe.Slug(strings.ToLower(scenario+" "+c.String()), func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
	}, "-", slugBytes, "cell")
}

// cellHash hashes the scenario and the cell's fields, each prefixed by
// its length in bytes: an encoding in which no two distinct cells meet,
// their bytes taken as they are (invalid UTF-8 included).
func cellHash(scenario string, c benchdata.Cell) string {
	h := sha256.New()
	for _, f := range []string{scenario, c.Pins, c.Variant, c.Class, strconv.Itoa(c.Concurrency), strconv.Itoa(c.Rate)} {
		h.Write(binary.AppendUvarint(nil, uint64(len(f))))
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

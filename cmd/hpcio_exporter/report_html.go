package main

import (
	"io"

	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/report/page"
)

// writeHTML draws the report as one self-contained page (package
// report/page).
func writeHTML(w io.Writer, r *report.Report) error {
	return page.Write(w, r)
}

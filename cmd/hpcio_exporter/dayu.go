package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/hpcio/hpcio_exporter/dayu"
)

// hpcio_exporter dayu graph DIR [--format=dot|mermaid]: the dataflow of one
// workflow run, the picture users of these stats draw first. Reading and
// drawing live in package dayu; this only wires the command line.
func init() {
	c := dayuCmd.Command("graph", "Print the dataflow of one workflow run's DaYu stats: stages and files, reads as file -> stage and writes as stage -> file, edges labelled and weighted by bytes. Files that cannot be read are reported on stderr and left out.")
	dir := c.Arg("dir", "Directory of one workflow run: its VOL/VFD stats files (YAML or JSON) and stage map.").Required().String()
	format := c.Flag("format", "Output format: dot (Graphviz) or mermaid (a Markdown code block).").Default(string(dayu.GraphDOT)).
		Enum(string(dayu.GraphDOT), string(dayu.GraphMermaid))
	maxSize := c.Flag("max-file-size", "Largest tracker file read; a larger one is skipped (too_large) by its size, before it is read. Each file is parsed within a memory budget proportional to its size.").
		Default(strconv.FormatInt(dayu.DefaultMaxFileBytes>>20, 10) + "MiB").Bytes()
	addCommand(c, func() error {
		return runDayuGraph(os.Stdout, os.Stderr, *dir, dayu.GraphFormat(*format), dayu.Limits{MaxFileBytes: int64(*maxSize)})
	})
}

func runDayuGraph(stdout, stderr io.Writer, dir string, format dayu.GraphFormat, lim dayu.Limits) error {
	w, failed, err := dayu.LoadDir(dir, lim)
	if err != nil {
		return err
	}
	tooLarge := false
	for _, f := range failed {
		fmt.Fprintf(stderr, "skipped: %v\n", f)
		tooLarge = tooLarge || dayu.OverSizeCap(f)
	}
	if tooLarge {
		fmt.Fprintf(stderr, "files over --max-file-size (%d bytes) are not read; a larger limit reads them, within a memory budget proportional to their size\n", lim.MaxFileBytes)
	}
	if len(w.Stages) == 0 {
		return fmt.Errorf("no readable DaYu stats files in %s", dir)
	}
	return dayu.WriteGraph(stdout, w, format)
}

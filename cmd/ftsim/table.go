package main

import (
	"bytes"
	"io"
	"text/tabwriter"
)

// table is a tabwriter for the command's aligned tables that writes its
// lines without the padding tabwriter leaves at their ends (after a
// terminated last cell, or before empty trailing cells), which would show in
// diffs, pasted output and logs.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// newTable returns a table writing to out, with tabwriter's flags.
func newTable(out io.Writer, flags uint) *table {
	t := &table{out: out}
	t.Writer = tabwriter.NewWriter(&t.buf, 2, 4, 2, ' ', flags)
	return t
}

// Flush aligns the rows written so far and writes them out.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	var b bytes.Buffer
	for line := range bytes.Lines(t.buf.Bytes()) {
		b.Write(bytes.TrimRight(line, " \n"))
		if bytes.HasSuffix(line, []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	t.buf.Reset()
	_, err := t.out.Write(b.Bytes())
	return err
}

package dp

import (
	"fmt"
	"io"
	"strings"
)

// FastaRecord is one sequence of a FASTA file.
type FastaRecord struct {
	ID          string // first word of the header line, without '>'
	Description string // rest of the header line
	Seq         string // sequence lines concatenated, whitespace removed, case kept
	Line        int    // line number of the header, for messages about the record
}

// ParseFASTA reads FASTA records: a '>' header line, then sequence lines,
// which are concatenated with all whitespace dropped. Sequence characters
// must be letters (the IUPAC nucleotide and amino-acid codes use the whole
// alphabet), '*' (stop) or '-' (gap); letter case is kept because LCS
// compares bytes. Lines starting with ';' are comments (old FASTA). Errors
// give name:line (and column for a bad character): sequence data before any
// header, an illegal character, a file without records. name is used only
// in errors.
func ParseFASTA(r io.Reader, name string) ([]FastaRecord, error) {
	lr := newLineReader(r, name)
	var out []FastaRecord
	var seq strings.Builder
	flush := func() {
		if len(out) > 0 {
			out[len(out)-1].Seq = seq.String()
			seq.Reset()
		}
	}
	for {
		text, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if strings.HasPrefix(text, ">") {
			flush()
			h := strings.TrimSpace(text[1:])
			id, desc := h, ""
			if k := strings.IndexAny(h, " \t"); k >= 0 {
				id, desc = h[:k], strings.TrimSpace(h[k+1:])
			}
			out = append(out, FastaRecord{ID: id, Description: desc, Line: lr.line})
			continue
		}
		if strings.HasPrefix(text, ";") {
			continue
		}
		for col := 0; col < len(text); col++ {
			c := text[col]
			switch {
			case c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r':
				continue
			case len(out) == 0:
				return nil, &ParseError{Name: name, Line: lr.line, Col: col + 1, Msg: "sequence data before the first '>' header"}
			case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', c == '*', c == '-':
				seq.WriteByte(c)
			default:
				return nil, &ParseError{Name: name, Line: lr.line, Col: col + 1,
					Msg: fmt.Sprintf("illegal sequence character %q (letters, '*' and '-' allowed)", c)}
			}
		}
	}
	flush()
	if len(out) == 0 {
		return nil, lr.errorf("no FASTA records (no '>' header line)")
	}
	return out, nil
}

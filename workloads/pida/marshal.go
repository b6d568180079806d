package pida

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Wire format, shared by Stack and Delta (all integers uvarint):
//
//	byte    version (1)
//	uvarint Keep (Delta only; absent for a Stack)
//	uvarint MinExceeded, Expanded, Generated
//	uvarint frame count, then the frames
//
// A frame starts with a tag byte: bits 0-3 Todo, bit 7 set when the frame is
// the child of the frame below it, bits 4-5 then holding the move. A child
// frame is fully determined by its parent and that move, so a typical frame
// costs one byte; any other frame (the first, a split-off frame) follows its
// tag with the board packed two tiles per byte (8 bytes) and G (1 byte).
// H and Blank are recomputed on decoding rather than trusted.
const wireVersion = 1

const (
	tagChild    = 0x80
	tagMoveMask = 0x30
	tagTodoMask = 0x0f
)

// childMove returns the move leading from frame p to frame c if c is p's
// child on the search path, which is how every frame pushed by Step relates
// to the one below it.
func childMove(p, c *Frame) (Move, bool) {
	if int(c.G) != int(p.G)+1 {
		return 0, false
	}
	for m := Up; m < NoMove; m++ {
		if LegalMoves(int(p.Blank)).Has(m) && int(p.Blank)+moveOffset(m) == int(c.Blank) {
			if p.Board.Apply(m) == c.Board {
				return m, true
			}
			return 0, false
		}
	}
	return 0, false
}

func appendFrames(buf []byte, frames []Frame) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(frames)))
	for i := range frames {
		f := &frames[i]
		if i > 0 {
			if m, ok := childMove(&frames[i-1], f); ok {
				buf = append(buf, tagChild|byte(m)<<4|byte(f.Todo)&tagTodoMask)
				continue
			}
		}
		buf = append(buf, byte(f.Todo)&tagTodoMask)
		for j := 0; j < Cells; j += 2 {
			buf = append(buf, f.Board[j]<<4|f.Board[j+1]&0x0f)
		}
		buf = append(buf, f.G)
	}
	return buf
}

// decoder reads the wire format and remembers the first error.
type decoder struct {
	data []byte
	err  error
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.err = fmt.Errorf("pida: decoding %s: bad or truncated varint", what)
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *decoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.data) == 0 {
		d.err = fmt.Errorf("pida: decoding %s: truncated", what)
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

func (d *decoder) header(withKeep bool) (keep int, minEx int, exp, gen uint64) {
	if v := d.byte("version"); d.err == nil && v != wireVersion {
		d.err = fmt.Errorf("pida: unknown encoding version %d", v)
	}
	if withKeep {
		k := d.uvarint("keep")
		if k > 1<<20 {
			d.err = fmt.Errorf("pida: keep %d out of range", k)
		}
		keep = int(k)
	}
	me := d.uvarint("MinExceeded")
	if d.err == nil && me > 3*MaxBound {
		d.err = fmt.Errorf("pida: MinExceeded %d out of range", me)
	}
	exp = d.uvarint("Expanded")
	gen = d.uvarint("Generated")
	return keep, int(me), exp, gen
}

func (d *decoder) frames() []Frame {
	n := d.uvarint("frame count")
	if d.err != nil {
		return nil
	}
	// Every frame takes at least one byte, which bounds the allocation by
	// the input size.
	if n > uint64(len(d.data)) {
		d.err = fmt.Errorf("pida: frame count %d impossible for %d bytes", n, len(d.data))
		return nil
	}
	frames := make([]Frame, 0, n)
	for i := 0; i < int(n); i++ {
		tag := d.byte("frame tag")
		if d.err != nil {
			return nil
		}
		var f Frame
		if tag&tagChild != 0 {
			if tag&^(tagChild|tagMoveMask|tagTodoMask) != 0 || i == 0 {
				d.err = fmt.Errorf("pida: frame %d: bad tag %#x", i, tag)
				return nil
			}
			p := &frames[i-1]
			m := Move((tag & tagMoveMask) >> 4)
			if !LegalMoves(int(p.Blank)).Has(m) || p.G >= MaxBound {
				d.err = fmt.Errorf("pida: frame %d: move %v impossible from the frame below", i, m)
				return nil
			}
			f.Board = p.Board.Apply(m)
			f.G = p.G + 1
		} else {
			if tag&^tagTodoMask != 0 {
				d.err = fmt.Errorf("pida: frame %d: bad tag %#x", i, tag)
				return nil
			}
			for j := 0; j < Cells; j += 2 {
				b := d.byte("board")
				f.Board[j], f.Board[j+1] = b>>4, b&0x0f
			}
			f.G = d.byte("path cost")
			if d.err != nil {
				return nil
			}
			if err := f.Board.Valid(); err != nil {
				d.err = fmt.Errorf("pida: frame %d: %v", i, err)
				return nil
			}
		}
		p := f.Board.Blank()
		f.Blank, f.H, f.Todo = uint8(p), uint8(Manhattan(f.Board)), MoveSet(tag&tagTodoMask)
		if f.Todo&^LegalMoves(p) != 0 {
			d.err = fmt.Errorf("pida: frame %d: untried moves %04b leave the board", i, f.Todo)
			return nil
		}
		frames = append(frames, f)
	}
	return frames
}

func (d *decoder) end() error {
	if d.err == nil && len(d.data) != 0 {
		d.err = fmt.Errorf("pida: %d trailing bytes", len(d.data))
	}
	return d.err
}

func appendCounters(buf []byte, minEx int, exp, gen uint64) []byte {
	buf = binary.AppendUvarint(buf, uint64(minEx))
	buf = binary.AppendUvarint(buf, exp)
	return binary.AppendUvarint(buf, gen)
}

// MarshalBinary encodes the stack compactly: a few header bytes, one byte
// per frame of the search path and ten bytes per frame that does not
// continue the frame below (the bottom one, split-off ones).
func (s *Stack) MarshalBinary() ([]byte, error) {
	buf := make([]byte, 0, 16+len(s.Frames)+10)
	buf = append(buf, wireVersion)
	buf = appendCounters(buf, s.MinExceeded, s.Expanded, s.Generated)
	return appendFrames(buf, s.Frames), nil
}

// UnmarshalBinary replaces s with a stack decoded by MarshalBinary,
// validating every frame. The decoded stack counts as not backed up, so its
// next Delta carries all frames; call ResetDelta if it was restored from the
// very backup the delta would go to.
func (s *Stack) UnmarshalBinary(data []byte) error {
	d := decoder{data: data}
	_, minEx, exp, gen := d.header(false)
	frames := d.frames()
	if err := d.end(); err != nil {
		return err
	}
	*s = Stack{Frames: frames, MinExceeded: minEx, Expanded: exp, Generated: gen}
	return nil
}

// Delta is what changed in a stack since its last backup: the FTPIDA*
// incremental critical data (thesis 004, Algorithm 3.2, C = B \ A). The
// bottom Keep frames are unchanged; everything above them is replaced by
// Frames. Its size is O(depth) at worst and usually a few frames.
type Delta struct {
	Keep                int     // bottom frames of the backup that stay
	Frames              []Frame // frames to put above them
	MinExceeded         int     // the live stack's MinExceeded
	Expanded, Generated uint64  // the live stack's counters
}

// Delta returns the changes since the last ResetDelta (or since the stack
// was created, reset or decoded), as a copy independent of s.
func (s *Stack) Delta() Delta {
	keep := min(s.clean, len(s.Frames))
	return Delta{
		Keep:        keep,
		Frames:      append([]Frame(nil), s.Frames[keep:]...),
		MinExceeded: s.MinExceeded,
		Expanded:    s.Expanded,
		Generated:   s.Generated,
	}
}

// ResetDelta marks the current state as backed up: the next Delta is
// relative to it. Call it when the backup is committed (acknowledged).
func (s *Stack) ResetDelta() { s.clean = len(s.Frames) }

// ApplyDelta brings a backup copy up to date with a delta taken from the
// live stack, which must have been equal to the backup when its ResetDelta
// was called.
func (s *Stack) ApplyDelta(d Delta) error {
	if d.Keep < 0 || d.Keep > len(s.Frames) {
		return fmt.Errorf("pida: delta keeps %d frames of a %d-frame backup", d.Keep, len(s.Frames))
	}
	s.Frames = append(s.Frames[:d.Keep], d.Frames...)
	s.MinExceeded, s.Expanded, s.Generated = d.MinExceeded, d.Expanded, d.Generated
	s.clean = len(s.Frames)
	return nil
}

// MarshalBinary encodes the delta in the stack's wire format plus Keep.
func (d Delta) MarshalBinary() ([]byte, error) {
	if d.Keep < 0 {
		return nil, errors.New("pida: negative Keep in delta")
	}
	buf := make([]byte, 0, 20+len(d.Frames)+10)
	buf = append(buf, wireVersion)
	buf = binary.AppendUvarint(buf, uint64(d.Keep))
	buf = appendCounters(buf, d.MinExceeded, d.Expanded, d.Generated)
	return appendFrames(buf, d.Frames), nil
}

// UnmarshalBinary decodes a delta made by Delta.MarshalBinary.
func (d *Delta) UnmarshalBinary(data []byte) error {
	dec := decoder{data: data}
	keep, minEx, exp, gen := dec.header(true)
	frames := dec.frames()
	if err := dec.end(); err != nil {
		return err
	}
	*d = Delta{Keep: keep, Frames: frames, MinExceeded: minEx, Expanded: exp, Generated: gen}
	return nil
}

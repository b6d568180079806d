// Package farm is the master/worker task-farm workload: a Mandelbrot image
// cut into tiles that workers compute independently (MPI/FT Model-Ia, DPS
// stateless segments), and the sequential reference the assembled image is
// checked against.
package farm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
)

// Default complex-plane window: the whole Mandelbrot set with a margin.
const (
	DefaultX0 = -2.0
	DefaultY0 = -1.25
	DefaultX1 = 0.5
	DefaultY1 = 1.25
)

// Image is a Mandelbrot image: W×H pixels covering the rectangle
// [X0, X1]×[Y0, Y1] of the complex plane.
//
// Pixel (px, py), with py downward as in every image format, samples the
// centre of its cell: c = X0 + (px+½)·(X1−X0)/W + i·(Y1 − (py+½)·(Y1−Y0)/H),
// so row 0 is the top (imaginary part near Y1).
type Image struct {
	W, H, MaxIter  int
	X0, Y0, X1, Y1 float64
}

// DefaultImage returns a w×h image of the default window.
func DefaultImage(w, h, maxIter int) Image {
	return Image{W: w, H: h, MaxIter: maxIter, X0: DefaultX0, Y0: DefaultY0, X1: DefaultX1, Y1: DefaultY1}
}

// Validate reports whether the image can be computed: positive size,
// 1 ≤ MaxIter ≤ 65535 (counts are uint16) and a finite, non-empty window.
func (im Image) Validate() error {
	switch {
	case im.W < 1 || im.H < 1:
		return fmt.Errorf("farm: image size %dx%d, want at least 1x1", im.W, im.H)
	case im.MaxIter < 1 || im.MaxIter > math.MaxUint16:
		return fmt.Errorf("farm: max iterations %d, want 1..%d", im.MaxIter, math.MaxUint16)
	}
	for _, v := range []float64{im.X0, im.Y0, im.X1, im.Y1} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("farm: window bounds must be finite")
		}
	}
	if !(im.X0 < im.X1) || !(im.Y0 < im.Y1) {
		return fmt.Errorf("farm: window (%g,%g)-(%g,%g) is empty, want X0 < X1 and Y0 < Y1", im.X0, im.Y0, im.X1, im.Y1)
	}
	return nil
}

// Tile is a rectangle of pixels, the unit of work the master hands out.
type Tile struct {
	ID   int // position in Tiles' row-major order
	X, Y int // top-left pixel
	W, H int // size in pixels
}

// Tiles cuts the image into tw×th tiles in row-major order (left to right,
// then top to bottom), ID counting from 0; tiles on the right and bottom
// edges are smaller when tw or th does not divide the size. It returns nil
// if tw or th is below 1.
func (im Image) Tiles(tw, th int) []Tile {
	if tw < 1 || th < 1 || im.W < 1 || im.H < 1 {
		return nil
	}
	nx, ny := (im.W+tw-1)/tw, (im.H+th-1)/th
	tiles := make([]Tile, 0, nx*ny)
	for y := 0; y < im.H; y += th {
		for x := 0; x < im.W; x += tw {
			tiles = append(tiles, Tile{ID: len(tiles), X: x, Y: y, W: min(tw, im.W-x), H: min(th, im.H-y)})
		}
	}
	return tiles
}

// Escape returns the escape iteration of c = cr + i·ci: the first n ≥ 1 with
// |z_n| > 2, where z_0 = 0 and z_{n+1} = z_n² + c, or maxIter if there is
// none up to maxIter (so a point escaping exactly at maxIter and one that
// never escapes look alike, as usual).
//
// Products are rounded explicitly (float64(x*y)) so that no architecture
// fuses them into multiply-adds: counts, and therefore digests, are the
// same on every machine.
func Escape(cr, ci float64, maxIter int) int {
	var x, y float64
	for n := 1; n <= maxIter; n++ {
		xy := float64(x * y)
		x = float64(x*x) - float64(y*y) + cr
		y = xy + xy + ci
		if float64(x*x)+float64(y*y) > 4 {
			return n
		}
	}
	return maxIter
}

// Compute returns the escape counts of tile t, row-major within the tile.
// The counts of a pixel do not depend on the tile it is computed in, so
// tiles assembled with Insert equal ComputeAll exactly.
func (im Image) Compute(t Tile) []uint16 {
	dst := make([]uint16, t.W*t.H)
	im.ComputeInto(dst, t)
	return dst
}

// ComputeInto is Compute writing into dst (length t.W*t.H), for workers
// that reuse a buffer. It panics if dst has the wrong length.
func (im Image) ComputeInto(dst []uint16, t Tile) {
	if len(dst) != t.W*t.H {
		panic(fmt.Sprintf("farm: buffer of %d counts for a %dx%d tile", len(dst), t.W, t.H))
	}
	dx := (im.X1 - im.X0) / float64(im.W)
	dy := (im.Y1 - im.Y0) / float64(im.H)
	for y := range t.H {
		ci := im.Y1 - float64((float64(t.Y+y)+0.5)*dy)
		row := dst[y*t.W : (y+1)*t.W]
		for x := range row {
			cr := im.X0 + float64((float64(t.X+x)+0.5)*dx)
			row[x] = uint16(Escape(cr, ci, im.MaxIter))
		}
	}
}

// ComputeAll returns the escape counts of the whole image, row-major: the
// sequential reference.
func (im Image) ComputeAll() []uint16 {
	return im.Compute(Tile{W: im.W, H: im.H})
}

// Insert copies a tile's counts (row-major within the tile, as Compute
// returns them) into the whole-image slice dst (length W*H), as the master
// assembles results. It panics if the lengths do not match.
func (im Image) Insert(dst []uint16, t Tile, counts []uint16) {
	if len(dst) != im.W*im.H || len(counts) != t.W*t.H {
		panic(fmt.Sprintf("farm: Insert of %d counts for a %dx%d tile into %d for %dx%d", len(counts), t.W, t.H, len(dst), im.W, im.H))
	}
	for y := range t.H {
		copy(dst[(t.Y+y)*im.W+t.X:(t.Y+y)*im.W+t.X+t.W], counts[y*t.W:(y+1)*t.W])
	}
}

// TileCost returns the modeled work of tile t: the sum of its pixels'
// iteration counts. counts is either the tile's own counts (length
// t.W*t.H, as Compute returns) or the whole image's (length W*H, as
// ComputeAll returns, from which t's rectangle is read). The two coincide
// when t is the whole image, so the length decides without ambiguity. It
// panics on any other length.
func (im Image) TileCost(t Tile, counts []uint16) float64 {
	switch len(counts) {
	case t.W * t.H:
		return float64(TotalIterations(counts))
	case im.W * im.H:
		var sum uint64
		for y := range t.H {
			sum += TotalIterations(counts[(t.Y+y)*im.W+t.X : (t.Y+y)*im.W+t.X+t.W])
		}
		return float64(sum)
	}
	panic(fmt.Sprintf("farm: TileCost with %d counts for a %dx%d tile of a %dx%d image", len(counts), t.W, t.H, im.W, im.H))
}

// TotalIterations returns the sum of the counts, the answer a run reports
// beside the digest.
func TotalIterations(counts []uint16) uint64 {
	var sum uint64
	for _, c := range counts {
		sum += uint64(c)
	}
	return sum
}

// Digest is the image digest, for comparing a distributed run with the
// reference: the 64-bit FNV-1a hash of w and h, each as 8 bytes
// little-endian (uint64), followed by each count as 2 bytes little-endian
// in row-major order, printed as 16 lowercase hex digits. The window and
// MaxIter are not included: they are configuration, not state. It panics
// if len(counts) != w*h.
func Digest(w, h int, counts []uint16) string {
	if len(counts) != w*h {
		panic(fmt.Sprintf("farm.Digest: %d counts for %dx%d", len(counts), w, h))
	}
	d := fnv.New64a()
	// Counts go to the hash a block at a time: one Write per count would
	// cost an interface call each.
	var buf [512]byte
	binary.LittleEndian.PutUint64(buf[0:], uint64(w))
	binary.LittleEndian.PutUint64(buf[8:], uint64(h))
	n := 16
	for _, c := range counts {
		if n == len(buf) {
			d.Write(buf[:])
			n = 0
		}
		binary.LittleEndian.PutUint16(buf[n:], c)
		n += 2
	}
	d.Write(buf[:n])
	return fmt.Sprintf("%016x", d.Sum64())
}

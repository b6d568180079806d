// Package stencil is the 3-D 7-point Jacobi workload (the benchmark of the
// fast-restart message-logging paper): a box of values relaxed toward the
// solution of Laplace's equation with fixed boundary values, and the
// sequential reference the distributed blocks are checked against.
package stencil

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// initStream is the second PCG seed word of NewGrid3, naming the workload's
// stream so that the same run seed elsewhere draws different numbers.
const initStream = 0x7374656e63696c30 // "stencil0"

// HotFace is the fixed value of the boundary face x = 0; every other
// boundary cell is 0. One hot face makes a field that keeps changing for
// many sweeps and is not symmetric in x, so a block exchanging the wrong
// halo shows up in the digest.
const HotFace = 1.0

// Point is the 7-point Jacobi kernel: the mean of a cell and its six face
// neighbours, computed as (c + xm + xp + ym + yp + zm + zp) / 7 with the
// additions left to right and a true division by 7. That evaluation order
// is part of the contract: floating-point addition is not associative, and
// the distributed blocks call this function so that their values are bit
// for bit those of Sweep. (There is no product, so no fused multiply-add can
// change the rounding on any architecture.)
func Point(c, xm, xp, ym, yp, zm, zp float64) float64 {
	return (c + xm + xp + ym + yp + zm + zp) / 7
}

// Grid3 is the stencil's state: an NX×NY×NZ interior surrounded by a
// one-cell layer of fixed boundary values.
//
// U holds (NX+2)(NY+2)(NZ+2) values, x fastest: cell (i, j, k), each index
// running from 0 to N+1 with 0 and N+1 on the boundary, is
// U[(k*(NY+2)+j)*(NX+2)+i] (see Index). The interior is 1 ≤ i ≤ NX,
// 1 ≤ j ≤ NY, 1 ≤ k ≤ NZ. The boundary layer is never written by Sweep;
// its edge and corner cells are never read either.
type Grid3 struct {
	NX, NY, NZ int
	U          []float64

	next []float64 // the other iterate, so that Sweep does not allocate
}

// NewGrid3 returns an nx×ny×nz grid with interior values drawn uniformly
// from [0, 1), deterministically in seed: a math/rand/v2 PCG seeded with
// (seed, initStream) yields one Float64 per interior cell in x-fastest
// order (i, then j, then k). The boundary face i = 0 is HotFace, all other
// boundary cells 0. It panics on a size below 1: callers validate user
// sizes before they get here.
func NewGrid3(nx, ny, nz int, seed uint64) *Grid3 {
	if nx < 1 || ny < 1 || nz < 1 {
		panic(fmt.Sprintf("stencil.NewGrid3: size %dx%dx%d, want at least 1x1x1", nx, ny, nz))
	}
	g := &Grid3{NX: nx, NY: ny, NZ: nz, U: make([]float64, (nx+2)*(ny+2)*(nz+2))}
	r := rand.New(rand.NewPCG(seed, initStream))
	for k := 1; k <= nz; k++ {
		for j := 1; j <= ny; j++ {
			for i := 1; i <= nx; i++ {
				g.U[g.Index(i, j, k)] = r.Float64()
			}
		}
	}
	for k := range nz + 2 {
		for j := range ny + 2 {
			g.U[g.Index(0, j, k)] = HotFace
		}
	}
	return g
}

// Index returns the position of cell (i, j, k) in U; indices include the
// boundary layer, so the interior starts at (1, 1, 1).
func (g *Grid3) Index(i, j, k int) int {
	return (k*(g.NY+2)+j)*(g.NX+2) + i
}

// Sweep performs one Jacobi iteration: every interior cell becomes Point of
// its old value and its six old neighbours (order: self, x−1, x+1, y−1,
// y+1, z−1, z+1). The new iterate is built in a second buffer that then
// becomes U, so slices of U taken before the call describe the old iterate.
func (g *Grid3) Sweep() {
	if len(g.next) != len(g.U) {
		g.next = make([]float64, len(g.U))
	}
	g.copyBoundary()
	sweepInterior(g.U, g.next, g.NX+2, g.NY+2, g.NZ)
	g.U, g.next = g.next, g.U
}

// sweepInterior writes to out the next iterate of the interior of box u:
// sx × sy cells a plane (the boundary layer included), nz interior planes.
// The reference grid and each distributed block sweep with it, so that
// their values agree bit for bit.
func sweepInterior(u, out []float64, sx, sy, nz int) {
	sxy := sx * sy
	for k := 1; k <= nz; k++ {
		for j := 1; j < sy-1; j++ {
			base := k*sxy + j*sx
			// Whole rows as equal-length slices: one bounds check per row,
			// none per cell.
			c := u[base : base+sx]
			ym, yp := u[base-sx:base], u[base+sx:base+2*sx]
			zm, zp := u[base-sxy:base-sxy+sx], u[base+sxy:base+sxy+sx]
			o := out[base : base+sx]
			ym, yp, zm, zp, o = ym[:len(c)], yp[:len(c)], zm[:len(c)], zp[:len(c)], o[:len(c)]
			for i := 1; i < len(c)-1; i++ {
				o[i] = Point(c[i], c[i-1], c[i+1], ym[i], yp[i], zm[i], zp[i])
			}
		}
	}
}

// copyBoundary copies the boundary faces of U into the scratch buffer. It
// costs a surface, not a volume, and keeps Sweep right even if a caller
// replaced U (a restored checkpoint) since the last sweep.
func (g *Grid3) copyBoundary() {
	sx, sy := g.NX+2, g.NY+2
	for k := range g.NZ + 2 {
		for j := range sy {
			row := (k*sy + j) * sx
			if k == 0 || k == g.NZ+1 || j == 0 || j == g.NY+1 {
				copy(g.next[row:row+sx], g.U[row:row+sx])
			} else {
				g.next[row], g.next[row+sx-1] = g.U[row], g.U[row+sx-1]
			}
		}
	}
}

// Run performs iters sweeps.
func (g *Grid3) Run(iters int) {
	for range iters {
		g.Sweep()
	}
}

// Interior returns a copy of the interior values in x-fastest order (i,
// then j, then k), the order of DigestValues.
func (g *Grid3) Interior() []float64 {
	out := make([]float64, 0, g.NX*g.NY*g.NZ)
	for k := 1; k <= g.NZ; k++ {
		for j := 1; j <= g.NY; j++ {
			base := g.Index(0, j, k)
			out = append(out, g.U[base+1:base+1+g.NX]...)
		}
	}
	return out
}

// Sum returns the sum of the interior values, added one at a time in
// x-fastest order (a distributed sum must use the same order to match
// bit for bit; compare its digest instead when it cannot).
func (g *Grid3) Sum() float64 {
	s := 0.0
	for k := 1; k <= g.NZ; k++ {
		for j := 1; j <= g.NY; j++ {
			base := g.Index(0, j, k)
			for _, v := range g.U[base+1 : base+1+g.NX] {
				s += v
			}
		}
	}
	return s
}

// Digest returns DigestValues of the interior.
func (g *Grid3) Digest() string {
	return DigestValues(g.NX, g.NY, g.NZ, g.Interior())
}

// DigestValues is the state digest of an nx×ny×nz interior, for comparing a
// distributed run with the reference: the 64-bit FNV-1a hash of nx, ny and
// nz, each as 8 bytes little-endian (uint64), followed by the IEEE-754 bits
// of each value (math.Float64bits, 8 bytes little-endian) in x-fastest
// order, printed as 16 lowercase hex digits. The boundary is not included:
// it is fixed. It panics if len(interior) != nx*ny*nz.
func DigestValues(nx, ny, nz int, interior []float64) string {
	if len(interior) != nx*ny*nz {
		panic(fmt.Sprintf("stencil.DigestValues: %d values for %dx%dx%d", len(interior), nx, ny, nz))
	}
	d := fnv.New64a()
	// Values go to the hash a block at a time: one Write per value would
	// cost an interface call each.
	var buf [512]byte
	binary.LittleEndian.PutUint64(buf[0:], uint64(nx))
	binary.LittleEndian.PutUint64(buf[8:], uint64(ny))
	binary.LittleEndian.PutUint64(buf[16:], uint64(nz))
	n := 24
	for _, v := range interior {
		if n == len(buf) {
			d.Write(buf[:])
			n = 0
		}
		binary.LittleEndian.PutUint64(buf[n:], math.Float64bits(v))
		n += 8
	}
	d.Write(buf[:n])
	return fmt.Sprintf("%016x", d.Sum64())
}

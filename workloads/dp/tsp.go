package dp

import (
	"errors"
	"fmt"
	"math"
)

// EdgeWeightType is a TSPLIB EDGE_WEIGHT_TYPE this package computes.
type EdgeWeightType string

// The supported edge weight types.
const (
	EUC2D    EdgeWeightType = "EUC_2D"   // nint of the Euclidean distance
	GEO      EdgeWeightType = "GEO"      // TSPLIB's great-circle distance in km
	Explicit EdgeWeightType = "EXPLICIT" // weights listed in EDGE_WEIGHT_SECTION
)

// MaxTSPWeight bounds explicit edge weights; Held-Karp keeps path costs in
// int32 and checks that n times the largest weight fits.
const MaxTSPWeight = math.MaxInt32

// maxCoord bounds coordinates so that every distance is finite and fits an
// int64 with room to spare.
const maxCoord = 1e12

// TSP is a symmetric travelling salesman instance with cities 0..N-1 (TSPLIB
// node k is city k-1). Build it with ParseTSPLIB, NewExplicitTSP,
// NewEuclideanTSP or RandomTSP: a struct literal lacks the data Dist caches.
type TSP struct {
	Name    string         // TSPLIB NAME
	Comment string         // TSPLIB COMMENT lines, joined by newlines
	N       int            // number of cities (DIMENSION)
	Type    EdgeWeightType // how Dist computes distances
	// Format is the EDGE_WEIGHT_FORMAT of an EXPLICIT instance ("" otherwise).
	Format string
	// X and Y are the node coordinates, nil when the file has none.
	X, Y []float64

	lat, lon []float64 // GEO: coordinates converted to radians
	w        []int32   // EXPLICIT: full N×N matrix, row-major
}

// Dist returns the distance between cities i and j (0 when i == j). For
// EXPLICIT instances it is the listed weight; for EUC_2D
// nint(sqrt(dx²+dy²)); for GEO the TSPLIB formula with the truncating
// degree conversion (see geoRadians).
func (t *TSP) Dist(i, j int) int {
	if i == j {
		return 0
	}
	switch t.Type {
	case Explicit:
		return int(t.w[i*t.N+j])
	case GEO:
		q1 := math.Cos(t.lon[i] - t.lon[j])
		q2 := math.Cos(t.lat[i] - t.lat[j])
		q3 := math.Cos(t.lat[i] + t.lat[j])
		// Rounding can push the argument a hair outside [-1, 1], where acos
		// is NaN; the reference C code never meets that on TSPLIB data.
		c := math.Max(-1, math.Min(1, 0.5*((1.0+q1)*q2-(1.0-q1)*q3)))
		return int(geoRadius*math.Acos(c) + 1.0)
	default:
		dx, dy := t.X[i]-t.X[j], t.Y[i]-t.Y[j]
		return int(math.Sqrt(dx*dx+dy*dy) + 0.5)
	}
}

// geoRadius is TSPLIB's idealised earth radius in km.
const geoRadius = 6378.388

// geoRadians converts a TSPLIB GEO coordinate DDD.MM (degrees, minutes) to
// radians the way TSPLIB's published optima were computed: the degrees are
// the coordinate truncated toward zero (the TSPLIB FAQ's "(int) x"), not
// rounded as tsp95.pdf prints (nint), and PI is the truncated 3.141592.
// Only this variant reproduces burma14 = 3323 and ulysses16 = 6859 (see
// shared/testdata/tsplib/GEO_DISTANCE_NOTES.txt).
func geoRadians(x float64) float64 {
	const pi = 3.141592
	deg := math.Trunc(x)
	return pi * (deg + 5.0*(x-deg)/3.0) / 180.0
}

// TourLength returns the length of the closed tour visiting the cities in
// the given order and returning to the first; tour must be a permutation of
// 0..N-1.
func (t *TSP) TourLength(tour []int) (int, error) {
	if len(tour) != t.N {
		return 0, fmt.Errorf("tsp: tour has %d cities, instance has %d", len(tour), t.N)
	}
	seen := make([]bool, t.N)
	for _, c := range tour {
		if c < 0 || c >= t.N || seen[c] {
			return 0, fmt.Errorf("tsp: tour is not a permutation of 0..%d (city %d)", t.N-1, c)
		}
		seen[c] = true
	}
	total := 0
	for k := range tour {
		total += t.Dist(tour[k], tour[(k+1)%len(tour)])
	}
	return total, nil
}

// NewExplicitTSP builds an EXPLICIT instance from a full distance matrix
// (weights in 0..MaxTSPWeight; the diagonal is ignored). An asymmetric
// matrix is accepted: Dist(i, j) is d[i][j], and Held-Karp then optimises
// the directed tour.
func NewExplicitTSP(name string, d [][]int) (*TSP, error) {
	n := len(d)
	if n == 0 {
		return nil, errors.New("tsp: empty distance matrix")
	}
	t := &TSP{Name: name, N: n, Type: Explicit, Format: "FULL_MATRIX", w: make([]int32, n*n)}
	for i, row := range d {
		if len(row) != n {
			return nil, fmt.Errorf("tsp: row %d has %d entries, want %d", i+1, len(row), n)
		}
		for j, v := range row {
			if v < 0 || v > MaxTSPWeight {
				return nil, fmt.Errorf("tsp: weight d[%d][%d] = %d outside 0..%d", i+1, j+1, v, MaxTSPWeight)
			}
			t.w[i*n+j] = int32(v)
		}
	}
	return t, nil
}

// NewEuclideanTSP builds an EUC_2D instance from coordinates.
func NewEuclideanTSP(name string, x, y []float64) (*TSP, error) {
	if len(x) == 0 || len(x) != len(y) {
		return nil, fmt.Errorf("tsp: %d x and %d y coordinates", len(x), len(y))
	}
	for i := range x {
		if !finiteCoord(x[i]) || !finiteCoord(y[i]) {
			return nil, fmt.Errorf("tsp: city %d: coordinate not finite or beyond ±%g", i+1, maxCoord)
		}
	}
	return &TSP{Name: name, N: len(x), Type: EUC2D, X: append([]float64(nil), x...), Y: append([]float64(nil), y...)}, nil
}

func finiteCoord(v float64) bool { return !math.IsNaN(v) && math.Abs(v) <= maxCoord }

// RandomTSP returns an EUC_2D instance of n cities with integer coordinates
// uniform in 0..1000, determined by seed alone.
func RandomTSP(n int, seed uint64) *TSP {
	r := newRand(seed, 0x545350) // stream "TSP"
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(uniform(r, 0, 1000))
		y[i] = float64(uniform(r, 0, 1000))
	}
	return &TSP{Name: fmt.Sprintf("random%d-seed%d", n, seed), N: n, Type: EUC2D, X: x, Y: y}
}

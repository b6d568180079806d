package dp

// The distributed DP workloads (thesis 004, chapters 4-5) share one shape:
// every object owns a slice of the DP table and advances through stages
// 0..Stages()-1. Before it computes stage s it needs one message from each
// object of its receiver set P_R(s); after computing a stage it sends the
// values its sender set needs. The message carrying data consumed at stage s
// has Tag s, whatever stage its sender had reached, so the same (stage,
// object) pair names the same message on both sides:
//
//	b ∈ SenderSet(s, a)  ⟺  a ∈ ReceiverSet(s, b)  ⟺  a sends b one message with Tag s
//
// The three problems differ only in which slice an object owns and in when
// that message leaves (SentAfter):
//
//	LCS       stage = row block; object k owns a block of columns and sends its
//	          right edge to its right neighbour after the same stage; block
//	          (r, k) runs at anti-diagonal step r + k (the wavefront)
//	knapsack  stage = item; object k owns capacity columns and sends the
//	          columns m-w_s its right-hand peers need after stage s-1
//	TSP       stage s = subsets of size s+1; the subsets of a stage are dealt
//	          round-robin by rank; after stage s-1 every object sends every
//	          other the rows it will need (all-to-all)
//
// Where the critical data lives (what the ABFT protocol replicates):
// LCSObject.Direction (which of the three inputs won a cell, eq. 4.7),
// KnapsackObject.Flag (the flag bits of chapter 5), TSPObject.Cell (the
// predecessor city, eq. 4.9). All three are part of the objects' state and
// of the digests Check compares.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"sort"

	"ftsim/sim"
)

// TagTick is the tag of the empty message an object sends itself when the
// inputs of its next stage are already there. Computing one stage per
// handler keeps progress, checkpoints and failures at stage granularity
// instead of letting an object with no inputs (the first LCS column block)
// run its whole share in one handler. Any message with this tag is a kick:
// a protocol that rebuilds an object outside the runtime's own Restore
// inbox can queue one to make it resume.
const TagTick int32 = -1

// StagedWorkload is implemented by the three distributed DP workloads. It
// exposes the per-stage communication structure so that a protocol can
// piggyback on exactly the application's messages (thesis 004 §4.2.5).
type StagedWorkload interface {
	sim.Workload
	// Problem is "lcs", "knapsack" or "tsp".
	Problem() string
	// Stages is the number of stages every object goes through; an object's
	// Progress is the number of stages it has completed.
	Stages() int
	// ReceiverSet is P_R(stage) of obj: the objects whose message with Tag
	// stage obj needs before computing stage, in increasing order.
	ReceiverSet(stage int, obj sim.ObjID) []sim.ObjID
	// SenderSet is P_S(stage) of obj: the objects obj sends a message with
	// Tag stage to, in increasing order.
	SenderSet(stage int, obj sim.ObjID) []sim.ObjID
	// SentAfter is the stage after whose computation a sender emits the
	// messages with Tag stage (stage itself for LCS, stage-1 otherwise).
	SentAfter(stage int) int
}

var (
	_ StagedWorkload = (*LCSWorkload)(nil)
	_ StagedWorkload = (*KnapsackWorkload)(nil)
	_ StagedWorkload = (*TSPWorkload)(nil)
)

// base holds what the three workloads share: the object count, the stage
// count, the cost model and the messaging mode.
type base struct {
	objects int
	stages  int
	cost    costModel
	// requests selects the request-reply messaging of the thesis's
	// algorithms 4.1 and 5.1: before computing a stage an object asks each
	// member of its receiver set for the stage's data, and a sender replies
	// only once asked. It doubles the messages (2(N-1) per LCS iteration, as
	// eq. 4.12 counts them) and gives the ABFT protocol the request messages
	// that Protocol 1 piggybacks critical data on.
	requests bool
	reqBytes int64 // modeled size of a request
}

// Requests reports whether the workload uses request-reply messaging, and
// the modeled size of a request.
func (w *base) Requests() (on bool, bytes int64) { return w.requests, w.reqBytes }

// TagRequest is the tag of the request for the data of stage s (request-reply
// mode): -2-s, below TagTick, so that it never collides with a data tag.
func TagRequest(s int) int32 { return int32(-2 - s) }

// RequestStage is the stage a request tag asks for, or -1 if tag is not a
// request.
func RequestStage(tag int32) int {
	if tag > -2 {
		return -1
	}
	return int(-2 - tag)
}

// NumObjects implements sim.Workload.
func (w *base) NumObjects() int { return w.objects }

// Stages is the number of stages every object completes.
func (w *base) Stages() int { return w.stages }

// TotalProgress implements sim.Workload: one unit per object per stage.
func (w *base) TotalProgress() int64 { return int64(w.objects) * int64(w.stages) }

// costModel turns real cells into modeled compute and bytes. Each real
// column stands for scale modeled columns (see Params.ModeledScale).
type costModel struct {
	cellOps, bytesPerCell, scale float64
}

// ops is the modeled work of cells real cells that each cost terms terms.
func (c costModel) ops(cells, terms int) float64 {
	return float64(cells) * float64(terms) * c.cellOps * c.scale
}

// bytes is the modeled size of n real values; scaled says whether the
// values run along the columns (and so stand for scale values each).
func (c costModel) bytes(n int, scaled bool) int64 {
	v := float64(n) * c.bytesPerCell
	if scaled {
		v *= c.scale
	}
	return int64(math.Ceil(v))
}

// split returns part k's share [lo, hi) of n items cut into parts
// contiguous blocks whose sizes differ by at most one; with more parts than
// items some shares are empty.
func split(k, n, parts int) (lo, hi int) {
	return k * n / parts, (k + 1) * n / parts
}

// owner is the part whose split share holds item c (0 <= c < n). It is
// never an empty part: the last part starting at or before c holds it.
func owner(c, n, parts int) int {
	return ((c+1)*parts - 1) / n
}

// objIDs converts sorted part indices to object ids.
func objIDs(ks []int) []sim.ObjID {
	out := make([]sim.ObjID, len(ks))
	for i, k := range ks {
		out[i] = sim.ObjID(k)
	}
	return out
}

// input is a message received for a stage not computed yet. Only the
// payload is kept: the runtime forbids keeping the message itself.
type input struct {
	stage int
	src   sim.ObjID
	data  []byte
}

// inputs are the buffered messages of an object, sorted by (stage, src).
// Peers may run several stages ahead, so an object buffers by stage; a
// second message for the same (stage, src), a duplicate, replaces the first.
type inputs []input

func (in *inputs) put(stage int, src sim.ObjID, data []byte) {
	s := *in
	i := sort.Search(len(s), func(i int) bool {
		return s[i].stage > stage || s[i].stage == stage && s[i].src >= src
	})
	if i < len(s) && s[i].stage == stage && s[i].src == src {
		s[i].data = data
		return
	}
	s = append(s, input{})
	copy(s[i+1:], s[i:])
	s[i] = input{stage, src, data}
	*in = s
}

// count is the number of senders heard from for stage.
func (in inputs) count(stage int) int {
	n := 0
	for _, x := range in {
		if x.stage == stage {
			n++
		}
	}
	return n
}

// take removes and returns the inputs of stage, which must be the lowest
// stage buffered (stale stages are never buffered), in sender order.
func (in *inputs) take(stage int) []input {
	s := *in
	n := 0
	for n < len(s) && s[n].stage == stage {
		n++
	}
	out := append([]input(nil), s[:n]...)
	*in = append(s[:0:0], s[n:]...)
	return out
}

// peek returns the inputs of stage, which must be the lowest stage
// buffered, in sender order, leaving them buffered.
func (in inputs) peek(stage int) []input {
	n := 0
	for n < len(in) && in[n].stage == stage {
		n++
	}
	return in[:n]
}

// payloadBytes is the real size of the buffered payloads.
func (in inputs) payloadBytes() int {
	n := 0
	for _, x := range in {
		n += len(x.data)
	}
	return n
}

func (in inputs) appendTo(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(in)))
	for _, x := range in {
		b = binary.AppendUvarint(b, uint64(x.stage))
		b = binary.AppendUvarint(b, uint64(x.src))
		b = binary.AppendUvarint(b, uint64(len(x.data)))
		b = append(b, x.data...)
	}
	return b
}

// readInputs decodes what appendTo wrote, rejecting stages outside
// [from, stages) and disorder.
func readInputs(d *decoder, from, stages, objects int) inputs {
	n := d.count(3)
	var in inputs
	for i := 0; i < n && d.err == nil; i++ {
		s, src, l := d.uvarint(), d.uvarint(), d.count(1)
		data := d.bytes(l)
		switch {
		case d.err != nil:
		case s < uint64(from) || s >= uint64(stages) || src >= uint64(objects):
			d.fail("buffered message out of range")
		case len(in) > 0 && (int(s) < in[len(in)-1].stage || int(s) == in[len(in)-1].stage && sim.ObjID(src) <= in[len(in)-1].src):
			d.fail("buffered messages out of order")
		default:
			in = append(in, input{int(s), sim.ObjID(src), append([]byte(nil), data...)})
		}
	}
	return in
}

// stager is the stage-driving part of an object, shared by the three kinds.
type stager struct {
	id    sim.ObjID
	stage int // stages completed; the next one to compute
	in    inputs

	// Request-reply mode only (base.requests):
	asked  int     // stages below asked have had their requests sent
	wants  []want  // requests received for data not computed yet
	outbox []reply // data computed, waiting for its request
	// ticking: a tick is on its way (not state: at worst a restored object
	// sends one tick too many, which finds nothing to do)
	ticking bool
}

// want is a request received before its data was computed.
type want struct {
	stage int
	src   sim.ObjID
}

// reply is a data message waiting for its request.
type reply struct {
	stage int
	dst   sim.ObjID
	size  int64
	data  []byte
}

// emit sends the data message of stage to dst: at once without requests,
// else when dst has asked for it (now if it already has).
func (s *stager) emit(c *sim.Ctx, b *base, dst sim.ObjID, stage int, size int64, data []byte) {
	if b.requests {
		i := slices.Index(s.wants, want{stage, dst})
		if i < 0 {
			s.outbox = append(s.outbox, reply{stage, dst, size, data})
			return
		}
		s.wants = slices.Delete(s.wants, i, i+1)
	}
	c.Send(dst, int32(stage), size, data)
}

// request handles a request from src for the data of stage: it answers at
// once from the outbox, remembers it if the data is still to be computed
// (sentAfter is the stage after which the data leaves), and ignores a
// duplicate for data already sent.
func (s *stager) request(c *sim.Ctx, src sim.ObjID, stage, sentAfter int) {
	for i, r := range s.outbox {
		if r.stage == stage && r.dst == src {
			s.outbox = slices.Delete(s.outbox, i, i+1)
			c.Send(src, int32(stage), r.size, r.data)
			return
		}
	}
	if sentAfter >= s.stage && !slices.Contains(s.wants, want{stage, src}) {
		s.wants = append(s.wants, want{stage, src})
	}
}

// Promised reports whether the data of stage for dst is computed and waits
// in the outbox for its request (request-reply mode).
func (s *stager) Promised(stage int, dst sim.ObjID) bool {
	return slices.ContainsFunc(s.outbox, func(r reply) bool { return r.stage == stage && r.dst == dst })
}

// outboxBytes is the modeled size of the replies waiting for their request.
func (s *stager) outboxBytes() int64 {
	var n int64
	for _, r := range s.outbox {
		n += r.size
	}
	return n
}

// appendRequests encodes the request-reply state.
func (s *stager) appendRequests(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(s.asked))
	b = binary.AppendUvarint(b, uint64(len(s.wants)))
	for _, x := range s.wants {
		b = binary.AppendUvarint(b, uint64(x.stage))
		b = binary.AppendUvarint(b, uint64(x.src))
	}
	b = binary.AppendUvarint(b, uint64(len(s.outbox)))
	for _, r := range s.outbox {
		b = binary.AppendUvarint(b, uint64(r.stage))
		b = binary.AppendUvarint(b, uint64(r.dst))
		b = binary.AppendUvarint(b, uint64(r.size))
		b = binary.AppendUvarint(b, uint64(len(r.data)))
		b = append(b, r.data...)
	}
	return b
}

// readRequests decodes what appendRequests wrote.
func (s *stager) readRequests(d *decoder, stages, objects int) {
	asked := d.uvarint()
	if d.err == nil && asked > uint64(stages) {
		d.fail("requests asked beyond the last stage")
	}
	var wants []want
	for n := d.count(2); n > 0 && d.err == nil; n-- {
		st, src := d.uvarint(), d.uvarint()
		if d.err == nil && (st >= uint64(stages) || src >= uint64(objects)) {
			d.fail("request out of range")
		}
		wants = append(wants, want{int(st), sim.ObjID(src)})
	}
	var out []reply
	for n := d.count(4); n > 0 && d.err == nil; n-- {
		st, dst, size, l := d.uvarint(), d.uvarint(), d.uvarint(), d.count(1)
		data := append([]byte(nil), d.bytes(l)...)
		if d.err == nil && (st >= uint64(stages) || dst >= uint64(objects) || size > math.MaxInt64) {
			d.fail("reply out of range")
		}
		out = append(out, reply{int(st), sim.ObjID(dst), int64(size), data})
	}
	if d.err == nil {
		s.asked, s.wants, s.outbox = int(asked), wants, out
	}
}

// Stage is the number of stages the object has completed.
func (s *stager) Stage() int { return s.stage }

// Progress implements sim.Object: stages completed.
func (s *stager) Progress() int64 { return int64(s.stage) }

// stepper is what the driver needs from a kind of object.
type stepper interface {
	st() *stager
	stages() int
	// need is the size of the receiver set of stage.
	need(stage int) int
	// common is the workload's shared part (messaging mode).
	common() *base
	// receivers is the receiver set of stage (whom to ask in request mode).
	receivers(stage int) []sim.ObjID
	// sentAfter is the stage after which the data of stage leaves.
	sentAfter(stage int) int
	// step computes the current stage, sends its outputs and advances.
	step(c *sim.Ctx)
}

// start and handle are the objects' Start and Handle: file the message
// under its stage, then compute the current stage if all its inputs are in.
func start(c *sim.Ctx, o stepper) { drive(c, o) }

func handle(c *sim.Ctx, o stepper, m *sim.Message) {
	s := o.st()
	requests := o.common().requests
	if r := RequestStage(m.Tag); r >= 0 {
		if r < o.stages() && requests {
			s.request(c, m.Src, r, o.sentAfter(r))
		}
	} else if m.Tag >= 0 && int(m.Tag) >= s.stage && int(m.Tag) < o.stages() {
		// Messages for stages already computed are stale duplicates (a
		// replay after a recovery); those past the end cannot be ours. Both
		// are ignored.
		s.in.put(int(m.Tag), m.Src, m.Payload)
	}
	if m.Tag == TagTick {
		s.ticking = false
	} else if requests {
		// Request-reply mode computes only on ticks, so that requests
		// queued behind a burst of data (a recovery's replay) are answered
		// between stages, as a process polling for requests between
		// iterations would, instead of after the whole burst.
		ask(c, o)
		if ready(o) && !s.ticking {
			s.ticking = true
			c.Send(s.id, TagTick, 0, nil)
		}
		return
	}
	drive(c, o)
}

func drive(c *sim.Ctx, o stepper) {
	s := o.st()
	ask(c, o)
	if !ready(o) {
		return
	}
	o.step(c)
	ask(c, o)
	if ready(o) && !s.ticking {
		s.ticking = true
		c.Send(s.id, TagTick, 0, nil)
	}
}

// ask sends, in request mode, the requests of the current stage if they
// have not been sent yet: the start of an iteration of algorithm 4.1.
func ask(c *sim.Ctx, o stepper) {
	s, b := o.st(), o.common()
	if !b.requests || s.stage >= o.stages() || s.asked > s.stage {
		return
	}
	for _, q := range o.receivers(s.stage) {
		c.Send(q, TagRequest(s.stage), b.reqBytes, nil)
	}
	s.asked = s.stage + 1
}

func ready(o stepper) bool {
	s := o.st()
	return s.stage < o.stages() && s.in.count(s.stage) >= o.need(s.stage)
}

// Object state encodings start with a kind byte, so a state restored into
// the wrong kind of object fails loudly.
const (
	kindLCS      = 'L'
	kindKnapsack = 'K'
	kindTSP      = 'T'
)

// decoder reads a state encoding; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = errors.New(msg)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length whose items take at least unit bytes each, so that a
// corrupt length cannot make the caller allocate more than the input holds.
func (d *decoder) count(unit int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)/unit) {
		d.fail("length beyond the end of the state")
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n < 0 || len(d.b) < n {
		d.fail("truncated")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) int32s(dst []int32) {
	b := d.bytes(4 * len(dst))
	if d.err == nil {
		for i := range dst {
			dst[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
	}
}

func (d *decoder) int64s(dst []int64) {
	b := d.bytes(8 * len(dst))
	if d.err == nil {
		for i := range dst {
			dst[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
}

func (d *decoder) uint64s(dst []uint64) {
	b := d.bytes(8 * len(dst))
	if d.err == nil {
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
}

// done reports the decoder's error, or trailing bytes, as an error about
// object id of the named kind.
func (d *decoder) done(kind string, id sim.ObjID) error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return fmt.Errorf("dp: %s object %d: corrupt state: %v", kind, id, d.err)
	}
	return nil
}

// header reads the kind byte and the stage count and checks them.
func (d *decoder) header(kind byte, stages int) int {
	if k := d.byte(); d.err == nil && k != kind {
		d.fail(fmt.Sprintf("state of kind %q, want %q", k, kind))
	}
	s := d.uvarint()
	if d.err == nil && s > uint64(stages) {
		d.fail(fmt.Sprintf("stage %d beyond the last (%d)", s, stages))
	}
	return int(s)
}

func appendInt32s(b []byte, v []int32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

func appendInt64s(b []byte, v []int64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

func appendUint64s(b []byte, v []uint64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

// decodeInt32s and decodeInt64s read a message payload of exactly n values.
// A wrong length is a bug in the sender's or the receiver's plan, never user
// input, so it panics.
func decodeInt32s(b []byte, n int) []int32 {
	if len(b) != 4*n {
		panic(fmt.Sprintf("dp: payload of %d bytes, want %d int32 values", len(b), n))
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func decodeInt64s(b []byte, n int) []int64 {
	if len(b) != 8*n {
		panic(fmt.Sprintf("dp: payload of %d bytes, want %d int64 values", len(b), n))
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// digestHeader starts a digest with the problem and its dimensions, so that
// tables of different shapes never share a digest.
func digestHeader(h hash.Hash64, problem string, dims ...int) {
	h.Write([]byte(problem))
	for _, d := range dims {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(d)))
	}
}

func digestString(h hash.Hash64) string { return fmt.Sprintf("%016x", h.Sum64()) }

// outcome compares an answer and a digest with the reference.
func outcome(answer int64, digest string, refAnswer int64, refDigest string) sim.Outcome {
	out := sim.Outcome{Digest: digest, Answer: fmt.Sprint(answer), OK: answer == refAnswer && digest == refDigest}
	if !out.OK {
		out.Detail = fmt.Sprintf("answer %d digest %s, reference %d digest %s", answer, digest, refAnswer, refDigest)
	}
	return out
}

package sim

// Ctx is what a handler sees while it runs: the clock of its own task, the
// compute it charges and the messages it sends. The handler's real code runs
// at once, when the task starts on a core; its modeled duration is the compute
// it charged, and each send leaves at the task-local time it was made, so a
// handler that computes borders, sends them, then computes its centre overlaps
// communication with computation exactly as the borders-first graph intends.
type Ctx struct {
	rt      *Runtime
	self    ObjID
	node    NodeID
	start   Time
	elapsed Time
	// held: the protocol took one of the handler's messages (OnSend
	// returned false), so that a cut (cut.go) cannot hold it back
	held bool
}

// Now is the task-local simulated time: task start plus compute charged so far.
func (c *Ctx) Now() Time { return c.start + c.elapsed }

// Self is the object being run.
func (c *Ctx) Self() ObjID { return c.self }

// Node is the node the object runs on.
func (c *Ctx) Node() NodeID { return c.node }

// Compute charges ops operations of modeled work at the node's core rate.
func (c *Ctx) Compute(ops float64) {
	if ops > 0 {
		// elapsed and the addend are at most MaxDuration: their sum cannot wrap
		c.elapsed = c.rt.bounded(c.elapsed+min(FromSeconds(ops/c.rt.cfg.Rate), MaxDuration), "cluster.rate and the workload's modeled operations")
	}
}

// Spend charges a modeled duration directly.
func (c *Ctx) Spend(d Time) {
	if d > 0 {
		c.elapsed = c.rt.bounded(c.elapsed+min(d, MaxDuration), "the workload's modeled costs")
	}
}

// Send sends an application message of modeled size bytes with a real payload to
// object dst. The sender's CPU cost of the message (Runtime.MessageCPU and
// the protocol layer's, SetLayerCPU) is charged to this task before the
// message leaves.
func (c *Ctx) Send(dst ObjID, tag int32, size int64, payload []byte) {
	rt := c.rt
	if d := rt.appMessageCPU(size); d > 0 {
		c.elapsed = rt.bounded(c.elapsed+d, "network.cpu_load, network.message_cpu and the protocol's middleware_cpu")
	}
	m := &Message{Src: c.self, Dst: dst, Tag: tag, Size: size, Payload: payload,
		Epoch: rt.epoch, SentAt: c.Now(), From: c.node}
	m.Hdr.Inc = rt.objs[c.self].inc
	rt.stats.AppMsgs++
	rt.stats.AppBytes += size
	if !rt.proto.OnSend(m) {
		c.held = true
		return
	}
	rt.transmit(m)
}

package experiment

import (
	"fmt"

	"ftsim/models/cpr"
	"ftsim/scenarios"
)

// Caveat says what a point's results would not show by themselves: that its
// protocol keeps no copy of a node's state where the node's failure leaves
// it, so every failure restarts the run from its initial state, as without
// protocol; or, with failure domains, that a domain holds a node with all its
// copies, so that the domain's failures restart the run. Such a
// configuration is valid (and the runs are correct), but a reader comparing
// protocols should know that the protocol could not act. Empty when failures
// cannot strike or the protocol can recover.
func Caveat(s *scenarios.Scenario) string {
	if s.Failures.Distribution == "none" {
		return ""
	}
	if c := domainCaveat(s); c != "" {
		return c
	}
	one := s.Cluster.Nodes == 1
	switch s.Protocol.Kind() {
	case "cpr":
		if cfg, err := cprConfig(s); err == nil && cfg.LostWithNode(s.Cluster.Nodes) {
			if one {
				return "cpr: on one node every checkpoint copy is on the node that fails; every failure restarts the run from scratch"
			}
			return "cpr: disk and memory checkpoints are lost with their node; every failure restarts the run from scratch"
		}
	case "dps":
		if one {
			return "dps: on one node a thread has no backup on another node; every failure restarts the run from scratch"
		}
	case "mlog":
		if one {
			return "mlog: on one node there is no buddy to hold checkpoints and logs; every failure restarts the run from scratch"
		}
	case "abft":
		if one {
			return "abft: on one node no neighbour holds a copy of the critical data; every failure restarts the run from scratch"
		}
	}
	return ""
}

// domainCaveat says which node's copies share its failure domain when the
// protocol keeps them on nodes further in rank order (cpr's buddy tier
// without a PFS level, mlog's buddy, dps's backups): that domain's failure
// takes them all.
func domainCaveat(s *scenarios.Scenario) string {
	d := sharedDomains(s)
	if d.domains == 0 {
		return ""
	}
	if d.key == "" {
		return fmt.Sprintf("replication: node %d and node %d, which holds the other replica of its objects, are in one failure domain of %d nodes; that domain's failure restarts the run from scratch",
			d.first, (d.first+d.offset)%s.Cluster.Nodes, s.Failures.GroupSize)
	}
	return fmt.Sprintf("%s: node %d and every node that holds its copies (protocol.%s = %d) are in one failure domain of %d nodes; that domain's failure restarts the run from scratch",
		s.Protocol.Kind(), d.first, d.key, d.offset, s.Failures.GroupSize)
}

// domainLoss describes the failure domains that hold a node with every node
// that keeps its copies (the protocol's key and offset placing them).
type domainLoss struct {
	key     string // "" for replication, whose offset is N/2
	offset  int
	first   int // the first such node
	domains int // how many domains hold one; 0 when none does
}

// sharedDomains finds the failure domains whose failure takes a node with
// all its copies, for the protocols that keep them on nodes further in rank
// order (cpr's buddy tier without a PFS level, mlog's buddy, dps's
// backups); none without group failures (which the validator allows with
// the exponential and weibull distributions only).
func sharedDomains(s *scenarios.Scenario) domainLoss {
	f, n := s.Failures, s.Cluster.Nodes
	if f.GroupMTBF <= 0 || n < 2 {
		return domainLoss{}
	}
	d := domainLoss{key: "buddy_offset"}
	copies := 1
	switch s.Protocol.Kind() {
	case "cpr":
		cfg, err := cprConfig(s)
		if err != nil {
			return domainLoss{}
		}
		if cfg.HasTier(cpr.PFS) {
			return domainLoss{} // the PFS copy survives any domain
		}
		if !cfg.HasTier(cpr.Buddy) {
			return domainLoss{} // LostWithNode's caveat says more
		}
		d.offset = max(cfg.BuddyOffset, 1)
	case "mlog":
		cfg, err := mlogConfig(s)
		if err != nil {
			return domainLoss{}
		}
		d.offset = max(cfg.BuddyOffset, 1)
	case "dps":
		cfg, err := dpsConfig(s)
		if err != nil || cfg.Backups < 1 {
			return domainLoss{}
		}
		d.key, d.offset, copies = "backup_offset", max(cfg.Offset, 1), min(cfg.Backups, n-1)
	case "replication":
		d.key, d.offset = "", n/2 // no key: replica B is half the nodes further
	default:
		return domainLoss{}
	}
	d.first, d.domains = copiesShareDomain(n, f.GroupSize, d.offset, copies)
	return d
}

// copiesShareDomain returns the first of nodes nodes whose copies, on the
// count nodes offset, offset+1, ... places further in rank order (wrapping
// around), all lie in its own failure domain of size consecutive nodes (-1
// if none does), and the number of domains that hold such a node.
func copiesShareDomain(nodes, size, offset, count int) (first, domains int) {
	first, last := -1, -1
	for s := range nodes {
		a := (s + offset) % nodes
		e := a + count - 1
		lo := s / size * size
		if e < nodes && a >= lo && e < lo+size {
			if first < 0 {
				first = s
			}
			if lo != last {
				domains++
				last = lo
			}
		}
	}
	return first, domains
}

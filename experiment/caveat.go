package experiment

import "ftsim/scenarios"

// Caveat says what a point's results would not show by themselves: that its
// protocol keeps no copy of a node's state where the node's failure leaves
// it, so every failure restarts the run from its initial state, as without
// protocol. Such a configuration is valid (and the runs are correct), but a
// reader comparing protocols should know that the protocol could not act.
// Empty when failures cannot strike or the protocol can recover.
func Caveat(s *scenarios.Scenario) string {
	if s.Failures.Distribution == "none" {
		return ""
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

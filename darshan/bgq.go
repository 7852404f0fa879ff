package darshan

import "sync"

func init() {
	register(&Module{ID: BGQ, Name: "BG/Q", Version: 2, counters: bgqSet, old: bgqOld, plain: true,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newBGQDecoder(ver, big) },
		Describe: description(bgqDescription), Unnamed: "darshan-bgq-record"})
}

// BG/Q module: one record describing the Blue Gene/Q partition, 11 integer
// counters and a timestamp. It has no name record; darshan-parser prints it
// as "darshan-bgq-record".

var bgqSet = newCounterSet(BGQ, func() (ints, floats []string) {
	return prefixed("BGQ", "CSJOBID", "NNODES", "RANKSPERNODE", "DDRPERNODE", "INODES", "ANODES",
			"BNODES", "CNODES", "DNODES", "ENODES", "TORUSENABLED"),
		[]string{"BGQ_F_TIMESTAMP"}
})

const (
	bgqRecordSize = 112     // version 2
	bgqV1Size     = 112 + 8 // version 1: 8 bytes of padding after the base record
)

var bgqOld = sync.OnceValue(func() map[uint32]*versionLayout {
	return map[uint32]*versionLayout{
		1: {size: bgqV1Size, skip: 8, nInts: 11, ints: identity(11), floats: identity(1)},
	}
})

func newBGQDecoder(ver uint32, big bool) moduleDecoder {
	return newCounterDecoder(bgqSet, ver, big, bgqRecordSize, 0, bgqOld)
}

// What darshan-parser prints above the records (log_print_description).

const bgqDescription = `
# description of BGQ counters:
#   BGQ_CSJOBID: BGQ control system job ID.
#   BGQ_NNODES: number of BGQ compute nodes for this job.
#   BGQ_RANKSPERNODE: number of MPI ranks per compute node.
#   BGQ_DDRPERNODE: size in MB of DDR3 per compute node.
#   BGQ_INODES: number of BGQ I/O nodes for this job.
#   BGQ_*NODES: dimension of A, B, C, D, & E dimensions of torus.
#   BGQ_TORUSENABLED: which dimensions of the torus are enabled.
#   BGQ_F_TIMESTAMP: timestamp when the BGQ data was collected.
`

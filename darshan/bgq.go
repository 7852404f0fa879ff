package darshan

// BG/Q module: one record describing the Blue Gene/Q partition, 11 integer
// counters and a timestamp. It has no name record; darshan-parser prints it
// as "darshan-bgq-record".

var bgqSet = newCounterSet(BGQ,
	prefixed("BGQ", "CSJOBID", "NNODES", "RANKSPERNODE", "DDRPERNODE", "INODES", "ANODES",
		"BNODES", "CNODES", "DNODES", "ENODES", "TORUSENABLED"),
	[]string{"BGQ_F_TIMESTAMP"})

const (
	bgqRecordSize = 112     // version 2
	bgqV1Size     = 112 + 8 // version 1: 8 bytes of padding after the base record
)

var bgqOld = map[uint32]*versionLayout{
	1: {size: bgqV1Size, skip: 8, nInts: 11, ints: identity(11), floats: identity(1)},
}

func newBGQDecoder(ver uint32, big bool) moduleDecoder {
	return newCounterDecoder(bgqSet, ver, big, bgqRecordSize, 0, bgqOld)
}

package parsertext

// BG/Q: darshan-bgq-logutils' description; records print as plain counters
// under the name "darshan-bgq-record" (see dumper.recordName).

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

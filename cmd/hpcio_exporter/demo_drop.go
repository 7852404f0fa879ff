package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// The demo's sidecar inputs: --demo writes a few Darshan logs and two DaYu
// workflow runs into a temporary drop directory and points the darshan and
// dayu collectors at it, so that the demo shows the sidecar families beside
// the Lustre ones. A directory the user gave (--darshan.dir, --dayu.dir)
// is used as given, and nothing is written for it.

// demoDropPrefix names the demo's drop directories in the temporary
// directory; the process id follows, so that a demo can tell the
// directories of demos that were killed (SIGKILL runs no cleanup) from
// those of demos still running.
const demoDropPrefix = "hpcio_exporter-demo-"

// The DaYu runs: copies of fixtures/dayu/yaml2024 (a two-stage workflow)
// and fixtures/dayu/json (today's format), one directory per run as the
// tracker writes them.
//
//go:embed demodata/dayu
var demoDayu embed.FS

// dropFlags tells whether the user gave the sidecar's directories, and
// keeps their flags, through which the demo gives its own.
type dropFlags struct {
	darshanDir, dayuDir     *kingpin.FlagClause
	darshanGiven, dayuGiven bool
}

// watchDropFlags notes, while the command line is parsed, whether
// --darshan.dir and --dayu.dir were given. The flags are the collectors'
// (collector.RegisterFlags declared them on serve); an action only adds to
// theirs.
func watchDropFlags(serve *kingpin.CmdClause, d *dropFlags) {
	d.darshanDir, d.dayuDir = serve.GetFlag("darshan.dir"), serve.GetFlag("dayu.dir")
	if d.darshanDir != nil {
		d.darshanDir.Action(func(*kingpin.ParseContext) error { d.darshanGiven = true; return nil })
	}
	if d.dayuDir != nil {
		d.dayuDir.Action(func(*kingpin.ParseContext) error { d.dayuGiven = true; return nil })
	}
}

// setUpDemoDrop writes the demo's Darshan logs and DaYu runs into a new
// temporary directory, for each collector that is enabled and was given
// no directory, and sets that collector's directory. It returns the
// function that removes the directory (the caller calls it when the server
// stops, on SIGINT and SIGTERM too), or nil when nothing was written.
func setUpDemoDrop(d dropFlags, logger *slog.Logger, now time.Time) (func(), error) {
	darshanWanted := d.darshanDir != nil && !d.darshanGiven && collector.Enabled("darshan")
	dayuWanted := d.dayuDir != nil && !d.dayuGiven && collector.Enabled("dayu")
	if !darshanWanted && !dayuWanted {
		return nil, nil
	}
	removeStaleDemoDrops(logger)
	dir, err := os.MkdirTemp("", demoDropPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("demo drop directory: %w", err)
	}
	remove := func() {
		if err := os.RemoveAll(dir); err != nil {
			logger.Warn("could not remove the demo's drop directory", "dir", dir, "err", err)
		}
	}
	fail := func(err error) (func(), error) {
		remove()
		return nil, fmt.Errorf("demo drop directory: %w", err)
	}
	if darshanWanted {
		darshanDir := filepath.Join(dir, "darshan")
		n, err := writeDemoDarshan(darshanDir, now)
		if err != nil {
			return fail(err)
		}
		if err := d.darshanDir.Model().Value.Set(darshanDir); err != nil {
			return fail(err)
		}
		logger.Info("demo: Darshan logs written for the darshan collector", "dir", darshanDir, "logs", n)
	}
	if dayuWanted {
		dayuDir := filepath.Join(dir, "dayu")
		n, err := writeDemoDayu(dayuDir)
		if err != nil {
			return fail(err)
		}
		if err := d.dayuDir.Model().Value.Set(dayuDir); err != nil {
			return fail(err)
		}
		logger.Info("demo: DaYu workflow runs written for the dayu collector", "dir", dayuDir, "runs", n)
	}
	// runServer removes it when it returns: after SIGTERM or SIGINT too,
	// which stop the server (serveUntilStopped), so that it does not
	// outlive a demo stopped with ^C or by systemd.
	return remove, nil
}

// removeStaleDemoDrops removes the drop directories of demos that are no
// longer running (killed without a chance to clean up), so that they do not
// pile up in the temporary directory of a machine that runs the demo in
// tests. Those of running demos, or of processes it cannot tell about, are
// left alone.
func removeStaleDemoDrops(logger *slog.Logger) {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), demoDropPrefix)
		pidText, _, ok2 := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || !ok2 || err != nil || pid <= 0 || !e.IsDir() {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // running (or not ours to ask about)
		}
		if err := os.RemoveAll(filepath.Join(os.TempDir(), e.Name())); err == nil {
			logger.Debug("removed the drop directory of a demo no longer running", "dir", e.Name())
		}
	}
}

// writeDemoDayu copies the embedded DaYu runs into dir.
func writeDemoDayu(dir string) (runs int, err error) {
	const root = "demodata/dayu"
	err = fs.WalkDir(demoDayu, root, func(name string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(name, root), "/")))
		if e.IsDir() {
			if path.Dir(name) == root {
				runs++
			}
			return os.MkdirAll(target, 0o755)
		}
		data, err := demoDayu.ReadFile(name)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	return runs, err
}

// demoStep is one Darshan log: one step (one srun) of one of the
// simulated server's fixed jobs, ended a while ago, so that the sidecar's
// jobid joins its Lustre traffic.
type demoStep struct {
	jobID   string
	uid     int64
	user    string
	exe     string // command line
	pid     int64
	ranks   int
	endAgo  time.Duration
	runtime time.Duration
	files   func(rank int) []demoFile // each rank's own files
	shared  []demoFile                // files every rank opens (rank -1 records)
}

// demoFile is the POSIX activity on one file of one rank, in requests of
// one size.
type demoFile struct {
	name                       string
	opens, stats               int64
	writes, reads              int64
	writeSize, readSize        int64
	writeTime, readTime        float64 // seconds
	metaTime                   float64
	fastestBytes, slowestBytes int64 // shared files
}

// demoSteps are the demo's logs: the churn job's two IOR steps (4 MiB
// sequential writes and reads, a file per rank), the MDT storm job's
// mdtest (thousands of 4 KiB writes and reads and their opens: the small
// requests and metadata load that Darshan's insights point at), and the
// checkpoint job's one shared file written in 4 MiB requests.
func demoSteps() []demoStep {
	ior := func(rank int) []demoFile {
		return []demoFile{{name: fmt.Sprintf("/lustre/scratch/rhea/ior/testfile.%08d", rank), opens: 2, stats: 1,
			writes: 256, writeSize: 4 << 20, writeTime: 2.1 + 0.05*float64(rank%3),
			reads: 256, readSize: 4 << 20, readTime: 1.4 + 0.03*float64(rank%4), metaTime: 0.02}}
	}
	mdtest := func(rank int) []demoFile {
		var files []demoFile
		for f := range 32 {
			files = append(files, demoFile{name: fmt.Sprintf("/lustre/scratch/kai/mdtest/#test-dir.0-0/mdtest_tree.%d.0/file.mdtest.%d.%d", rank, rank, f),
				opens: 160, stats: 160, writes: 160, writeSize: 4096, writeTime: 0.09,
				reads: 160, readSize: 4096, readTime: 0.05, metaTime: 1.6})
		}
		return files
	}
	return []demoStep{
		{jobID: lustresim.ChurnJobID, uid: 31337, user: "rhea", exe: "/apps/ior/4.0.0/bin/ior -a POSIX -F -w -r -t 4m -b 1g",
			pid: 41877, ranks: 8, endAgo: 47 * time.Minute, runtime: 6 * time.Minute, files: ior},
		{jobID: lustresim.ChurnJobID, uid: 31337, user: "rhea", exe: "/apps/ior/4.0.0/bin/ior -a POSIX -F -w -r -t 4m -b 1g",
			pid: 42310, ranks: 8, endAgo: 12 * time.Minute, runtime: 6 * time.Minute, files: ior},
		{jobID: lustresim.StormJobID, uid: 4242, user: "kai", exe: "/apps/mdtest/bin/mdtest -n 5120 -F -w 4096 -e 4096 -u",
			pid: 9113, ranks: 4, endAgo: 23 * time.Minute, runtime: 4 * time.Minute, files: mdtest},
		{jobID: lustresim.CheckpointJobID, uid: 5150, user: "ines", exe: "/apps/ckpt/bin/ckpt_app --interval 10 --out /lustre/pool/ckpt",
			pid: 20771, ranks: 16, endAgo: 31 * time.Minute, runtime: 20 * time.Minute,
			shared: []demoFile{{name: "/lustre/pool/ckpt/state.0042.h5", opens: 16, stats: 16,
				writes: 16 * 256, writeSize: 4 << 20, writeTime: 38, metaTime: 0.4,
				fastestBytes: 256 * 4 << 20, slowestBytes: 256 * 4 << 20}}},
	}
}

// writeDemoDarshan writes the demo's logs under dir as darshan-runtime
// lays them out (YYYY/M/D/<user>_<exe>_id<job>-<pid>_<M>-<D>-<seconds>-<n>.darshan),
// each with its end as modification time.
func writeDemoDarshan(dir string, now time.Time) (int, error) {
	steps := demoSteps()
	for i, st := range steps {
		end := now.Add(-st.endAgo)
		data, err := st.log(end)
		if err != nil {
			return 0, fmt.Errorf("demo Darshan log of job %s: %w", st.jobID, err)
		}
		exe := path.Base(strings.Fields(st.exe)[0])
		day := filepath.Join(dir, strconv.Itoa(end.Year()), strconv.Itoa(int(end.Month())), strconv.Itoa(end.Day()))
		if err := os.MkdirAll(day, 0o755); err != nil {
			return 0, err
		}
		midnight := time.Date(end.Year(), end.Month(), end.Day(), 0, 0, 0, 0, end.Location())
		name := fmt.Sprintf("%s_%s_id%s-%d_%d-%d-%d-%d.darshan", st.user, exe, st.jobID, st.pid,
			int(end.Month()), end.Day(), int(end.Sub(midnight).Seconds()), 1000+i)
		file := filepath.Join(day, name)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return 0, err
		}
		if err := os.Chtimes(file, end, end); err != nil {
			return 0, err
		}
	}
	return len(steps), nil
}

// log returns the step's log, ended at end.
func (st demoStep) log(end time.Time) ([]byte, error) {
	jobID, err := strconv.ParseInt(st.jobID, 10, 64)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	start := end.Add(-st.runtime)
	w.Job = darshan.Job{UID: st.uid, JobID: jobID, StartTime: start.Unix(), EndTime: end.Unix(),
		NProcs: int64(st.ranks), Metadata: "lib_ver=3.4.6\nh=romio_no_indep_rw=true;cb_nodes=4\n"}
	w.Exe = st.exe
	w.Mounts = []darshan.Mount{{Path: "/lustre", Type: "lustre"}, {Path: "/home", Type: "nfs"}}
	w.RecordsPerStream = 64
	layout := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	runtime := st.runtime.Seconds()
	write := func(rank int64, f demoFile) error {
		c := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: rank, ID: w.AddName(f.name)}, Layout: layout,
			Ints: make([]int64, len(layout.Ints)), Floats: make([]float64, len(layout.Floats))}
		set := func(name string, v float64) {
			if i := layout.IntIndex(name); i >= 0 {
				c.Ints[i] = int64(v)
			} else if i := layout.FloatIndex(name); i >= 0 {
				c.Floats[i] = v
			}
		}
		set("POSIX_OPENS", float64(f.opens))
		set("POSIX_STATS", float64(f.stats))
		set("POSIX_MODE", 0o644)
		set("POSIX_MEM_ALIGNMENT", 8)
		set("POSIX_FILE_ALIGNMENT", 1<<20)
		set("POSIX_F_META_TIME", f.metaTime)
		set("POSIX_F_OPEN_START_TIMESTAMP", 0.4)
		set("POSIX_F_CLOSE_END_TIMESTAMP", runtime-0.5)
		for _, d := range []struct {
			dir         string
			n, size     int64
			seconds     float64
			first, last float64
		}{{"WRITE", f.writes, f.writeSize, f.writeTime, 1, runtime * 0.6}, {"READ", f.reads, f.readSize, f.readTime, runtime * 0.6, runtime - 1}} {
			if d.n == 0 {
				continue
			}
			moved := float64(d.n * d.size)
			past := map[string]string{"WRITE": "WRITTEN", "READ": "READ"}[d.dir]
			set("POSIX_"+d.dir+"S", float64(d.n))
			set("POSIX_BYTES_"+past, moved)
			set("POSIX_MAX_BYTE_"+past, moved-1)
			set("POSIX_SEQ_"+d.dir+"S", float64(d.n-1))
			set("POSIX_CONSEC_"+d.dir+"S", float64(d.n-1))
			set("POSIX_SIZE_"+d.dir+"_"+sizeBin(d.size), float64(d.n))
			set("POSIX_F_"+d.dir+"_TIME", d.seconds)
			set("POSIX_F_MAX_"+d.dir+"_TIME", d.seconds/float64(d.n)*4)
			set("POSIX_MAX_"+d.dir+"_TIME_SIZE", float64(d.size))
			set("POSIX_F_"+d.dir+"_START_TIMESTAMP", d.first)
			set("POSIX_F_"+d.dir+"_END_TIMESTAMP", d.last)
		}
		// The most common request size, as Darshan's ACCESS1 holds it.
		access, count := f.writeSize, f.writes
		if f.readSize == f.writeSize {
			count += f.reads
		} else if f.reads > f.writes {
			access, count = f.readSize, f.reads
		}
		set("POSIX_ACCESS1_ACCESS", float64(access))
		set("POSIX_ACCESS1_COUNT", float64(count))
		if f.reads > 0 && f.writes > 0 {
			set("POSIX_RW_SWITCHES", 1)
		}
		if rank < 0 {
			set("POSIX_FASTEST_RANK", 3)
			set("POSIX_FASTEST_RANK_BYTES", float64(f.fastestBytes))
			set("POSIX_SLOWEST_RANK", 11)
			set("POSIX_SLOWEST_RANK_BYTES", float64(f.slowestBytes))
			set("POSIX_F_FASTEST_RANK_TIME", f.writeTime/float64(st.ranks)*0.8)
			set("POSIX_F_SLOWEST_RANK_TIME", f.writeTime/float64(st.ranks)*1.3)
		}
		return w.Write(c)
	}
	for r := range st.ranks {
		if st.files == nil {
			break
		}
		for _, f := range st.files(r) {
			if err := write(int64(r), f); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range st.shared {
		if err := write(-1, f); err != nil {
			return nil, err
		}
	}
	// Rank 0's log of the run, through STDIO.
	sl := darshan.LayoutOf(darshan.STDIO, darshan.STDIO.CurrentVersion())
	so := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.STDIO, Rank: 0, ID: w.AddName("/home/" + st.user + "/run-" + st.jobID + ".out")},
		Layout: sl, Ints: make([]int64, len(sl.Ints)), Floats: make([]float64, len(sl.Floats))}
	so.Ints[sl.IntIndex("STDIO_OPENS")] = 1
	so.Ints[sl.IntIndex("STDIO_WRITES")] = 120
	so.Ints[sl.IntIndex("STDIO_BYTES_WRITTEN")] = 9600
	if err := w.Write(so); err != nil {
		return nil, err
	}
	// Each rank's POSIX heatmap: writes over the first 60 % of the run,
	// reads after, in 16 bins.
	const bins = 16
	hid := w.AddName("heatmap:POSIX")
	for r := range st.ranks {
		var written, read int64
		if st.files != nil {
			for _, f := range st.files(r) {
				written += f.writes * f.writeSize
				read += f.reads * f.readSize
			}
		}
		for _, f := range st.shared {
			written += f.writes * f.writeSize / int64(st.ranks)
			read += f.reads * f.readSize / int64(st.ranks)
		}
		h := &darshan.HeatmapRecord{Key: darshan.Key{Module: darshan.Heatmap, Rank: int64(r), ID: hid},
			BinWidth: runtime / bins, ReadBins: make([]int64, bins), WriteBins: make([]int64, bins)}
		const writeBins = bins * 6 / 10
		for b := range writeBins {
			h.WriteBins[b] = written / writeBins
		}
		for b := writeBins; b < bins; b++ {
			h.ReadBins[b] = read / (bins - writeBins)
		}
		if err := w.Write(h); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sizeBin names Darshan's request size bin of size: as the runtime's
// DARSHAN_BUCKET_INC, each bin includes its upper edge (a 1 MiB request is
// in 100K_1M).
func sizeBin(size int64) string {
	for _, b := range []struct {
		max  int64
		name string
	}{{100, "0_100"}, {1 << 10, "100_1K"}, {10 << 10, "1K_10K"}, {100 << 10, "10K_100K"}, {1 << 20, "100K_1M"},
		{4 << 20, "1M_4M"}, {10 << 20, "4M_10M"}, {100 << 20, "10M_100M"}, {1 << 30, "100M_1G"}} {
		if size <= b.max {
			return b.name
		}
	}
	return "1G_PLUS"
}

#!/bin/sh
# hpcio-report-epilog.sh: a Slurm epilog that writes the I/O report of the
# job that just finished, for its owner: `hpcio_exporter report` on the
# job's Darshan logs (found in the Darshan log directory by job id and
# date, darshan-runtime's <dir>/YYYY/M/D/ layout) and, when PROMETHEUS_URL
# is set, the Lustre servers' view of the same job id.
#
# Install (slurm.conf, on the compute nodes):
#     Epilog=/etc/slurm/epilog.d/hpcio-report-epilog.sh
# slurmd runs the epilog as root on every node of the job: the report is
# written on the job's first node only (the others exit at once). It runs
# the exporter as the job's user (setpriv, else runuser), so that it reads
# only the logs the user may read and writes only where the user may
# write. Run as another user (EpilogSlurmctld runs as SlurmUser), it runs
# the exporter as that user, and the report directory must be writable by
# it.
#
# The report goes to REPORT_DIR/job-<jobid>.html (mode 0600, owned by the
# user, written whole or not at all: hpcio_exporter's -o). REPORT_DIR is
# created (mode 0700, owned by the user) when missing; an existing one not
# owned by the user is left alone and nothing is written. Where home
# directories are on NFS with root squashed, root cannot create it there:
# set REPORT_DIR to a directory root may write in (/var/lib/hpcio-reports/%u
# on a shared file system, say), or have users create theirs.
#
# The epilog never fails the job's node: every outcome, a report written or
# none (no Darshan log for the job, which is most jobs; a damaged log; an
# unreachable Prometheus, after which the report is made from the logs
# alone), exits 0 and is logged to syslog (logger, tag hpcio-report) and to
# standard error. The exporter's messages hold no file content.
#
# Settings: the environment, or the shell file HPCIO_REPORT_DEFAULTS
# (default /etc/default/hpcio-report-epilog), read first:
#   HPCIO_EXPORTER      the binary (default /usr/bin/hpcio_exporter)
#   DARSHAN_LOG_DIRS    Darshan log directories, separated by spaces
#                       (darshan-runtime's DARSHAN_LOG_DIR; default
#                       /var/log/darshan)
#   REPORT_DIR          where reports go; %u is the user name, %h the
#                       user's home directory (default %h/hpcio-reports)
#   REPORT_FORMAT       html or json (default html)
#   REPORT_NO_PATHS     1: leave file paths out of the report
#   PROMETHEUS_URL      Prometheus holding the Lustre job_stats (default:
#                       none, the application's view alone)
#   PROMETHEUS_CONFIG   its HTTP client configuration (TLS, basic auth);
#                       it must be readable by the user the exporter runs
#                       as, hence by every user: give it credentials of
#                       a read-only account users may know
#   REPORT_TIMEOUT      seconds the report may take before it is given up
#                       (default 120): an epilog that hangs drains the node
#
# From Slurm: SLURM_JOB_ID, SLURM_JOB_USER (required); SLURM_JOB_UID,
# SLURM_JOB_GID, SLURM_JOB_START_TIME, SLURM_JOB_NODELIST, SLURMD_NODENAME
# (used when set). With SLURM_JOB_START_TIME (Unix seconds), the day
# directories are searched from the job's start and the servers' window
# starts there; without it, the last 31 days are searched and the window
# is the logs' start and end.
#
# Try it by hand, as root, for a finished job:
#     SLURM_JOB_ID=123456 SLURM_JOB_USER=alice DARSHAN_LOG_DIRS=/lustre/darshan \
#         /etc/slurm/epilog.d/hpcio-report-epilog.sh

TAG=hpcio-report

log() {
	priority=$1
	shift
	logger -t "$TAG" -p "user.$priority" -- "$*" 2>/dev/null
	printf '%s: %s\n' "$TAG" "$*" >&2
}

main() {
	defaults=${HPCIO_REPORT_DEFAULTS:-/etc/default/hpcio-report-epilog}
	if [ -r "$defaults" ]; then
		# shellcheck disable=SC1090
		. "$defaults"
	fi
	exporter=${HPCIO_EXPORTER:-/usr/bin/hpcio_exporter}
	dirs=${DARSHAN_LOG_DIRS:-/var/log/darshan}
	format=${REPORT_FORMAT:-html}
	timeout_s=${REPORT_TIMEOUT:-120}

	job=${SLURM_JOB_ID:-}
	user=${SLURM_JOB_USER:-}
	case $job in
	'' | *[!0-9]*)
		log warning "SLURM_JOB_ID='$job' is not a job id: no report"
		return
		;;
	esac
	case $user in
	'' | -* | *[!A-Za-z0-9._-]*)
		log warning "job $job: SLURM_JOB_USER is not a user name: no report"
		return
		;;
	esac
	case $format in
	html | json) ;;
	*)
		log warning "job $job: REPORT_FORMAT=$format is neither html nor json: no report"
		return
		;;
	esac

	# One report per job: on its first node only.
	if [ -n "${SLURM_JOB_NODELIST:-}" ] && [ -n "${SLURMD_NODENAME:-}" ] && command -v scontrol >/dev/null 2>&1; then
		first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1)
		if [ -n "$first" ] && [ "$first" != "$SLURMD_NODENAME" ]; then
			return
		fi
	fi

	if ! entry=$(getent passwd "$user"); then
		log warning "job $job: no user $user: no report"
		return
	fi
	uid=${SLURM_JOB_UID:-$(printf '%s' "$entry" | cut -d: -f3)}
	gid=${SLURM_JOB_GID:-$(printf '%s' "$entry" | cut -d: -f4)}
	home=$(printf '%s' "$entry" | cut -d: -f6)
	template=${REPORT_DIR:-%h/hpcio-reports}
	outdir=$(printf '%s' "$template" | sed -e "s|%u|$user|g" -e "s|%h|$home|g")

	# The directory: the user's, or nothing is written.
	if [ ! -e "$outdir" ]; then
		if [ "$(id -u)" = 0 ]; then
			if ! install -d -m 0700 -o "$uid" -g "$gid" "$outdir" 2>/dev/null; then
				log warning "job $job: cannot create $outdir: no report"
				return
			fi
		elif ! mkdir -p -m 0700 "$outdir" 2>/dev/null; then
			log warning "job $job: cannot create $outdir: no report"
			return
		fi
	fi
	if [ -L "$outdir" ] || [ ! -d "$outdir" ]; then
		log warning "job $job: $outdir is not a directory: no report"
		return
	fi
	if [ "$(id -u)" = 0 ] && [ "$(stat -c %u "$outdir")" != "$uid" ]; then
		log warning "job $job: $outdir is not owned by $user: no report"
		return
	fi
	out="$outdir/job-$job.$format"

	# The exporter runs as the job's user when the epilog runs as root.
	as_user=""
	if [ "$(id -u)" = 0 ] && [ "$uid" != 0 ]; then
		if command -v setpriv >/dev/null 2>&1; then
			as_user="setpriv --reuid=$uid --regid=$gid --init-groups --"
		else
			as_user="runuser -u $user --"
		fi
	fi

	set -- --format="$format" -o "$out" --jobid="$job"
	for d in $dirs; do
		set -- "$@" --darshan.dir="$d"
	done
	case ${SLURM_JOB_START_TIME:-} in
	'' | *[!0-9]*) ;;
	*) set -- "$@" --from="$SLURM_JOB_START_TIME" ;;
	esac
	if [ "${REPORT_NO_PATHS:-}" = 1 ]; then
		set -- "$@" --no-paths
	fi
	if [ -n "${PROMETHEUS_URL:-}" ]; then
		if [ -n "${PROMETHEUS_CONFIG:-}" ]; then
			ok=0
			report "$@" --prometheus.url="$PROMETHEUS_URL" --prometheus.config="$PROMETHEUS_CONFIG" || ok=$?
		else
			ok=0
			report "$@" --prometheus.url="$PROMETHEUS_URL" || ok=$?
		fi
		if [ "$ok" = 0 ]; then
			log info "job $job: report written to $out"
			return
		fi
		case $msg in
		*"no Darshan log of job"*)
			log info "job $job: no Darshan log, no report (${msg#hpcio_exporter report: })"
			return
			;;
		esac
		log warning "job $job: the report with the servers' view failed (${msg#hpcio_exporter report: }); making it from the logs alone"
	fi
	if report "$@"; then
		log info "job $job: report written to $out"
		return
	fi
	case $msg in
	*"no Darshan log of job"*) log info "job $job: no Darshan log, no report (${msg#hpcio_exporter report: })" ;;
	*) log warning "job $job: no report: ${msg#hpcio_exporter report: }" ;;
	esac
}

# report runs the exporter's report command with "$@" as the job's user,
# from /, within the timeout; msg is the last line it wrote on standard
# error (its error, when it fails).
report() {
	# shellcheck disable=SC2086
	msg=$(cd / && timeout -k 5 "$timeout_s" $as_user "$exporter" report "$@" 2>&1 >/dev/null)
	status=$?
	msg=$(printf '%s\n' "$msg" | tail -n 1)
	case $status in
	0) return 0 ;;
	124 | 137) msg="timed out after ${timeout_s}s" ;;
	esac
	[ -n "$msg" ] || msg="exit status $status"
	return 1
}

main
exit 0

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
# written on the job's first node only (the others exit at once).
#
# Root does nothing on a path the job's user controls. As root, the
# epilog only reads its settings, checks the job's user in the user
# database (getent passwd) and changes to that user (setpriv, else
# runuser): everything that touches the report directory (the home
# directory checked, the directory created, checked and written) is done
# as the user, so a link or a race can only lead it where the user may
# write anyway. It refuses, and writes nothing for:
#   - root (uid 0) and system accounts: uids below MIN_UID (default 1000),
#     and nobody (65534, the kernel's overflow uid, and -1, -2);
#   - a user name that is not the name of its user database entry (getent
#     passwd 0 is root's entry), or whose uid is not SLURM_JOB_UID;
#   - group 0 (SLURM_JOB_GID, else the user's primary group).
# Run as another user (EpilogSlurmctld runs as SlurmUser), it runs
# everything as that user, and the report directory must be writable by
# it.
#
# The report goes to REPORT_DIR/job-<jobid>.html (mode 0600, owned by the
# user, written whole or not at all: hpcio_exporter's -o). The user
# creates REPORT_DIR (mode 0700, with any missing parent) when it is
# missing; a home directory is never created: with %h in REPORT_DIR, a
# home that is not an existing directory means no report. A REPORT_DIR
# that is a link, not a directory, or not owned by the user is left alone
# and nothing is written. Since the user creates it, REPORT_DIR must lie
# where the user may create it: their home (the default), or a directory
# like /var/lib/hpcio-reports, mode 1777 (sticky: users cannot remove each
# other's), with REPORT_DIR=/var/lib/hpcio-reports/%u (a user who takes
# another's name there only stops that user's reports).
#
# The epilog never fails the job's node: every outcome, a report written or
# none (no Darshan log for the job, which is most jobs; a damaged log; an
# unreachable Prometheus, after which the report is made from the logs
# alone; a refused user or directory), exits 0 and is logged to syslog
# (logger, tag hpcio-report) and to standard error. The exporter's messages
# hold no file content.
#
# Settings: the environment, or the shell file HPCIO_REPORT_DEFAULTS
# (default /etc/default/hpcio-report-epilog), read first, as root: it must
# be root's and writable by root alone. Values are words, never patterns:
# the script expands no wildcard (set -f), and substitutes %u and %h as
# plain text.
#   HPCIO_EXPORTER      the binary (default /usr/bin/hpcio_exporter)
#   DARSHAN_LOG_DIRS    Darshan log directories, separated by spaces
#                       (darshan-runtime's DARSHAN_LOG_DIR; default
#                       /var/log/darshan)
#   REPORT_DIR          where reports go, an absolute path; %u is the user
#                       name, %h the user's home directory (default
#                       %h/hpcio-reports)
#   REPORT_FORMAT       html or json (default html)
#   REPORT_NO_PATHS     1: leave file paths out of the report
#   MIN_UID             the lowest uid that gets a report (default 1000,
#                       login.defs' UID_MIN); uid 0 never does
#   PROMETHEUS_URL      Prometheus holding the Lustre job_stats (default:
#                       none, the application's view alone)
#   PROMETHEUS_CONFIG   its HTTP client configuration (TLS, basic auth);
#                       it must be readable by the user the exporter runs
#                       as, hence by every user: give it credentials of
#                       a read-only account users may know
#   REPORT_TIMEOUT      seconds the report may take before it is given up
#                       (default 120; the directory's check has as long):
#                       an epilog that hangs drains the node
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

# No pathname expansion anywhere: DARSHAN_LOG_DIRS is split into words
# only, never matched against what users put in the file system.
set -f

TAG=hpcio-report

log() {
	priority=$1
	shift
	logger -t "$TAG" -p "user.$priority" -- "$*" 2>/dev/null
	printf '%s: %s\n' "$TAG" "$*" >&2
}

# prepare is run as the job's user, with the report directory ($1), the
# home directory when REPORT_DIR names it ($2, else empty) and the uid
# that must own the directory ($3, else empty). Its exit status says what
# failed (root reads nothing else from it): 3 the home is not a
# directory, 4 the directory cannot be created, 5 it is a link or not a
# directory, 6 it is not the user's.
# shellcheck disable=SC2016
prepare='umask 077
[ -z "$2" ] || [ -d "$2" ] || exit 3
[ -d "$1" ] || mkdir -p -- "$1" 2>/dev/null || exit 4
if [ -L "$1" ] || [ ! -d "$1" ]; then exit 5; fi
[ -z "$3" ] || [ "$(stat -c %u -- "$1")" = "$3" ] || exit 6'

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
	min_uid=${MIN_UID:-1000}
	root=false
	[ "$(id -u)" = 0 ] && root=true

	job=${SLURM_JOB_ID:-}
	user=${SLURM_JOB_USER:-}
	case $job in
	'' | *[!0-9]*)
		log warning "SLURM_JOB_ID='$job' is not a job id: no report"
		return
		;;
	esac
	case $user in
	'' | . | .. | -* | *[!A-Za-z0-9._-]*)
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
	if ! is_id "$min_uid"; then
		log warning "job $job: MIN_UID=$min_uid is not a uid: no report"
		return
	fi

	# One report per job: on its first node only.
	if [ -n "${SLURM_JOB_NODELIST:-}" ] && [ -n "${SLURMD_NODENAME:-}" ] && command -v scontrol >/dev/null 2>&1; then
		first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1)
		if [ -n "$first" ] && [ "$first" != "$SLURMD_NODENAME" ]; then
			return
		fi
	fi

	# The job's user, as the user database has it: getent looks a number
	# up as a uid, so the entry must carry the very name asked for.
	if ! entry=$(getent passwd "$user"); then
		log warning "job $job: no user $user: no report"
		return
	fi
	IFS=: read -r name _ uid gid _ home _ <<EOF
$entry
EOF
	if [ "$name" != "$user" ]; then
		log warning "job $job: the user database has no user named $user (it answers $name): no report"
		return
	fi
	if ! is_id "$uid"; then
		log warning "job $job: user $user has no numeric uid: no report"
		return
	fi
	if [ -n "${SLURM_JOB_UID:-}" ] && [ "$SLURM_JOB_UID" != "$uid" ]; then
		log warning "job $job: SLURM_JOB_UID=$SLURM_JOB_UID is not $user's uid ($uid): no report"
		return
	fi
	if [ "$uid" -eq 65534 ] || [ "$uid" -ge 4294967294 ]; then
		log info "job $job: $user (uid $uid) is the overflow user, nobody: no report"
		return
	fi
	if [ "$uid" -eq 0 ] || [ "$uid" -lt "$min_uid" ]; then
		log info "job $job: $user (uid $uid) is root or a system account (MIN_UID=$min_uid): no report"
		return
	fi
	gid=${SLURM_JOB_GID:-$gid}
	if ! is_id "$gid"; then
		log warning "job $job: group '$gid' is not a gid: no report"
		return
	fi
	if [ "$gid" -eq 0 ]; then
		log warning "job $job: group 0 is root's: no report"
		return
	fi

	template=${REPORT_DIR:-%h/hpcio-reports}
	needs_home=
	case $template in
	*%h*)
		case $home in
		/*) needs_home=$home ;;
		*)
			log warning "job $job: $user's home directory '$home' is not an absolute path: no report"
			return
			;;
		esac
		;;
	esac
	outdir=$(expand_template "$template")
	case $outdir in
	/*) ;;
	*)
		log warning "job $job: REPORT_DIR=$template is not an absolute path: no report"
		return
		;;
	esac

	# The directory, checked and created as the user: the user's, or
	# nothing is written.
	owner=
	$root && owner=$uid
	status=0
	(cd / && as_user sh -c "$prepare" hpcio-report-prepare "$outdir" "$needs_home" "$owner") || status=$?
	case $status in
	0) ;;
	3)
		log warning "job $job: $user's home directory $home is not a directory (it is never created): no report"
		return
		;;
	4)
		log warning "job $job: $user cannot create $outdir: no report"
		return
		;;
	5)
		log warning "job $job: $outdir is not a directory: no report"
		return
		;;
	6)
		log warning "job $job: $outdir is not owned by $user: no report"
		return
		;;
	124 | 137)
		log warning "job $job: checking $outdir timed out after ${timeout_s}s: no report"
		return
		;;
	*)
		log warning "job $job: cannot check $outdir as $user (exit status $status): no report"
		return
		;;
	esac
	out="$outdir/job-$job.$format"

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

# is_id says whether $1 is a uid or gid as the kernel has them: digits,
# at most 4294967295 (so that the shell's comparisons of it never fail).
is_id() {
	case $1 in
	'' | *[!0-9]* | ???????????*) return 1 ;;
	esac
	[ "$1" -le 4294967295 ]
}

# expand_template prints $1 with every %u replaced by the user name and
# every %h by the home directory, as plain text: no character of either
# means anything here (a home field may hold any byte but ':' and a
# newline).
expand_template() {
	rest=$1
	result=
	while :; do
		case $rest in
		*%*) ;;
		*) break ;;
		esac
		result=$result${rest%%"%"*}
		rest=${rest#*"%"}
		case $rest in
		u*)
			result=$result$user
			rest=${rest#u}
			;;
		h*)
			result=$result$home
			rest=${rest#h}
			;;
		*) result=$result% ;;
		esac
	done
	printf '%s\n' "$result$rest"
}

# as_user runs "$@" within the timeout as the job's user when the epilog
# runs as root (setpriv sets the real, effective and saved ids and the
# user's groups: there is no way back to root), else as the epilog's user.
as_user() {
	if ! $root; then
		timeout -k 5 "$timeout_s" "$@"
	elif command -v setpriv >/dev/null 2>&1; then
		timeout -k 5 "$timeout_s" setpriv --reuid="$uid" --regid="$gid" --init-groups -- "$@"
	else
		timeout -k 5 "$timeout_s" runuser -u "$user" -- "$@"
	fi
}

# report runs the exporter's report command with "$@" as the job's user,
# from /, within the timeout; msg is the last line it wrote on standard
# error (its error, when it fails), control characters removed.
report() {
	msg=$(cd / && as_user "$exporter" report "$@" 2>&1 >/dev/null)
	status=$?
	msg=$(printf '%s\n' "$msg" | tail -n 1 | tr -d '[:cntrl:]')
	case $status in
	0) return 0 ;;
	124 | 137) msg="timed out after ${timeout_s}s" ;;
	esac
	[ -n "$msg" ] || msg="exit status $status"
	return 1
}

main
exit 0

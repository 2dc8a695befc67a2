#!/bin/sh
# nictune capture for FreeBSD (`nictune capture --print-script freebsd`, nictune @VERSION@).
#
# Run as root on the FreeBSD host:   sh nictune-capture.sh [SECONDS [OUTDIR]]
# It only reads: every command below prints state and nothing is changed. It writes
# OUTDIR/nictune-freebsd-HOST-TIME.tar.gz (OUTDIR: the current directory by default).
# SECONDS (default 10, 1-600) is the gap between the two `vmstat -i` samples, so that
# interrupt rates are measured rather than averaged since boot; `top` measures its CPU
# shares over the same gap. Then, wherever nictune runs:
#   tar -xzf nictune-freebsd-HOST-TIME.tar.gz
#   nictune doctor --os freebsd --root nictune-freebsd-HOST-TIME
#
# The files, as `nictune doctor --os freebsd --root` reads them, and their commands:
#   vmstat-i.txt     vmstat -i                       (first sample)
#   top.txt          top -b -SIP -d 2 -s SECONDS 100 (two displays; the last counts)
#   vmstat-i-2.txt   vmstat -i                       (SECONDS later)
#   sysctl.txt       sysctl -a
#   netstat-m.txt    netstat -m
#   ifconfig.txt     ifconfig -a
#   ipfw-nat.txt     ipfw nat show config            (absent when ipfw is not loaded)
#   ipfw.txt         ipfw list
#   dmesg.txt        /var/run/dmesg.boot, else dmesg
#   loader.conf      /boot/loader.conf, then /boot/loader.conf.local
#   sysctl.conf      /etc/sysctl.conf, then /etc/sysctl.conf.local
#   rc.conf          /etc/rc.conf, then /etc/rc.conf.local
#   capture.txt      each command, its exit status and first error line; sample times
# A command that fails leaves no file (doctor lists it as missing) and its status in
# capture.txt. NICTUNE_ROOT=DIR reads the configuration files under DIR instead of /
# (a jail's or a mounted system's); the commands always describe the running host.

set -u
umask 077

seconds=${1:-10}
outdir=${2:-.}
root=${NICTUNE_ROOT:-}

case $seconds in
'' | *[!0-9]*)
	echo "nictune-capture: SECONDS is '$seconds'; allowed: a whole number of seconds from 1 to 600 (try 10)" >&2
	exit 2
	;;
esac
if [ "$seconds" -lt 1 ] || [ "$seconds" -gt 600 ]; then
	echo "nictune-capture: SECONDS is $seconds; allowed: 1 to 600 (try 10)" >&2
	exit 2
fi
if [ ! -d "$outdir" ] || [ ! -w "$outdir" ]; then
	echo "nictune-capture: OUTDIR '$outdir' is not a writable directory; give one as the second argument" >&2
	exit 2
fi

host=$(hostname 2>/dev/null)
@WORKDIR@
record="$dir/capture.txt"

# note KEY VALUE: one line of capture.txt.
note() {
	printf '%s=%s\n' "$1" "$2" >>"$record"
}

# run FILE COMMAND...: COMMAND's output into FILE.
run() {
	file=$1
	shift
	note "command.$file" "$*"
	if "$@" >"$dir/$file" 2>"$work/err"; then
		note "status.$file" 0
	else
		note "status.$file" "$?"
		rm -f "$dir/$file"
	fi
	err=$(head -n 1 "$work/err" | tr -d '\r')
	if [ -n "$err" ]; then
		note "error.$file" "$err"
	fi
}

# copy FILE PATH...: the readable ones of PATH, concatenated in order, into FILE.
copy() {
	file=$1
	shift
	found=
	for path in "$@"; do
		if [ -r "$root$path" ]; then
			cat "$root$path" >>"$dir/$file"
			found="$found $path"
		fi
	done
	note "source.$file" "${found# }"
}

note format nictune.freebsd-capture/v1
note tool "nictune @VERSION@"
note started "$stamp"
note hostname "$host"
note uname "$(uname -srm 2>/dev/null)"
note seconds "$seconds"

t1=$(date +%s)
note vmstat_i_1_at "$t1"
run vmstat-i.txt vmstat -i
run top.txt top -b -SIP -d 2 -s "$seconds" 100
now=$(date +%s)
left=$((t1 + seconds - now))
if [ "$left" -gt 0 ]; then
	sleep "$left"
fi
note vmstat_i_2_at "$(date +%s)"
run vmstat-i-2.txt vmstat -i

run sysctl.txt sysctl -a
run netstat-m.txt netstat -m
run ifconfig.txt ifconfig -a
run ipfw-nat.txt ipfw nat show config
run ipfw.txt ipfw list
if [ -r "$root/var/run/dmesg.boot" ]; then
	copy dmesg.txt /var/run/dmesg.boot
else
	run dmesg.txt dmesg
fi
copy loader.conf /boot/loader.conf /boot/loader.conf.local
copy sysctl.conf /etc/sysctl.conf /etc/sysctl.conf.local
copy rc.conf /etc/rc.conf /etc/rc.conf.local

@PACK@

#!/bin/sh
# nictune capture for Linux (`nictune capture --print-script linux`, nictune @VERSION@),
# for hosts without nictune. Where nictune runs, `nictune capture DIR` captures more: this
# script cannot decode ethtool's and the netdev family's netlink replies, so coalescing,
# rings, channels, features and per-NAPI values are marked unreadable in the capture (their
# `ethtool -c/-g/-l/-k` text is kept under ethtool/ for people to read).
#
# Run as root on the Linux host:   sh nictune-capture.sh [OUTDIR]
# It only reads. It writes OUTDIR/nictune-linux-HOST-TIME.tar.gz (OUTDIR: the current
# directory by default). Then, wherever nictune runs:
#   tar -xzf nictune-linux-HOST-TIME.tar.gz
#   nictune doctor --root nictune-linux-HOST-TIME
#
# What it copies, at the same paths (what `nictune show/doctor --root` read):
#   /proc/stat, interrupts, softirqs, cmdline, net/dev, net/softnet_stat,
#   /proc/sys/kernel/{osrelease,hostname}, /proc/sys/net/core/*, /proc/irq/N/*affinity_list,
#   /sys/kernel/irq/N/actions, /sys/devices/system/cpu/cpuN/topology/*,
#   /sys/class/net/IF/{ifindex,gro_flush_timeout,napi_defer_hard_irqs,threaded,mtu,operstate,
#   tx_queue_len,speed},
#   /sys/class/net/IF/queues/*/{rps_cpus,xps_cpus,rps_flow_cnt}, the device's vendor, device,
#   irq and msi_irqs, /sys/module/DRIVER/parameters/*, /etc/modprobe.d/*,
#   /run/nictune/module-params/*; links and directory listings go to index.json, process
#   names to netlink.json, kernel, host and time to manifest.json.
# NICTUNE_ROOT=DIR reads all of these under DIR instead of / (a copied tree).

set -u
umask 077
# Directory listings in byte order, as nictune capture stores them.
LC_ALL=C
export LC_ALL

outdir=${1:-.}
root=${NICTUNE_ROOT:-}
if [ ! -d "$outdir" ] || [ ! -w "$outdir" ]; then
	echo "nictune-capture: OUTDIR '$outdir' is not a writable directory; give one as the argument" >&2
	exit 2
fi

host=$(cat "$root/proc/sys/kernel/hostname" 2>/dev/null)
@WORKDIR@
: >"$work/links"
: >"$work/dirs"

# file PATH: the file's text at the same path under the capture (unreadable ones are left out,
# as absent).
file() {
	if [ -f "$root$1" ] && [ -r "$root$1" ]; then
		mkdir -p "$dir$(dirname "$1")"
		cat "$root$1" >"$dir$1" 2>/dev/null || rm -f "$dir$1"
	fi
}

# link PATH: the link's target, as stored, for index.json.
link() {
	if [ -L "$root$1" ]; then
		printf '%s\t%s\n' "$1" "$(readlink "$root$1")" >>"$work/links"
	fi
}

# listing PATH: the directory's entries, for index.json; prints them.
listing() {
	if [ -d "$root$1" ]; then
		ls -1 "$root$1" 2>/dev/null | while IFS= read -r entry; do
			printf '%s\t%s\n' "$1" "$entry" >>"$work/dirs"
			printf '%s\n' "$entry"
		done
	fi
}

for f in /proc/stat /proc/interrupts /proc/softirqs /proc/cmdline /proc/net/dev \
	/proc/net/softnet_stat /proc/sys/kernel/osrelease /proc/sys/kernel/hostname; do
	file "$f"
done
for f in "$root"/proc/sys/net/core/*; do
	file "${f#"$root"}"
done
for n in $(ls -1 "$root/proc/irq" 2>/dev/null); do
	case $n in *[!0-9]*) continue ;; esac
	file "/proc/irq/$n/smp_affinity_list"
	file "/proc/irq/$n/effective_affinity_list"
	file "/sys/kernel/irq/$n/actions"
done
for c in $(listing /sys/devices/system/cpu); do
	case $c in cpu[0-9]*) ;; *) continue ;; esac
	for f in core_id physical_package_id thread_siblings_list; do
		file "/sys/devices/system/cpu/$c/topology/$f"
	done
done

drivers=
for ifname in $(listing /sys/class/net); do
	base=/sys/class/net/$ifname
	[ -d "$root$base" ] || continue
	link "$base"
	for f in ifindex gro_flush_timeout napi_defer_hard_irqs threaded mtu operstate \
		tx_queue_len speed; do
		file "$base/$f"
	done
	for q in $(listing "$base/queues"); do
		for f in rps_cpus xps_cpus rps_flow_cnt; do
			file "$base/queues/$q/$f"
		done
	done
	mkdir -p "$dir/ethtool"
	for opt in c g l k; do
		ethtool "-$opt" "$ifname" >"$dir/ethtool/$ifname-$opt.txt" 2>&1
	done
	[ -L "$root$base/device" ] || continue
	link "$base/device"
	real=$(cd "$root$base/device" 2>/dev/null && pwd -P) || continue
	real=${real#"$root"}
	for f in vendor device irq; do
		file "$real/$f"
	done
	for d in "$real" "$(dirname "$real")"; do
		for m in $(listing "$d/msi_irqs"); do
			file "$d/msi_irqs/$m"
		done
	done
	if [ -L "$root$base/device/driver" ]; then
		link "$base/device/driver"
		drv=$(basename "$(readlink "$root$base/device/driver")")
		case " $drivers " in *" $drv "*) ;; *) drivers="$drivers $drv" ;; esac
	fi
done
for drv in $drivers; do
	listing "/sys/bus/pci/drivers/$drv" >/dev/null
	listing "/sys/module/$drv" >/dev/null
	for p in $(listing "/sys/module/$drv/parameters"); do
		file "/sys/module/$drv/parameters/$p"
	done
done
for d in /etc/modprobe.d /run/nictune/module-params; do
	for f in $(listing "$d"); do
		file "$d/$f"
	done
done

# JSON strings: backslash and double quote escaped, control characters dropped.
json_escape() {
	tr -d '\000-\010\013-\037' | sed 's/\\/\\\\/g; s/"/\\"/g'
}

# index.json: links and listings from the tab-separated records.
{
	printf '{\n  "links": {'
	json_escape <"$work/links" | awk -F '\t' '{ printf "%s\n    \"%s\": \"%s\"", (NR > 1 ? "," : ""), $1, $2 }'
	printf '\n  },\n  "dirs": {'
	json_escape <"$work/dirs" | awk -F '\t' '
		$1 != last { printf "%s\n    \"%s\": [", (NR > 1 ? "\n    ]," : ""), $1; sep = ""; last = $1 }
		{ printf "%s\n      \"%s\"", sep, $2; sep = "," }
		END { if (NR > 0) printf "\n    ]" }'
	printf '\n  },\n  "errors": {}\n}\n'
} >"$dir/index.json"

# netlink.json: ethtool and netdev unreadable (see the header), process names.
why="not in a script capture (ethtool text is under ethtool/); nictune capture on the host reads it"
{
	printf '{\n  "ethtool": {'
	sep=
	for ifname in $(ls -1 "$root/sys/class/net" 2>/dev/null); do
		e=$(printf '%s' "$ifname" | json_escape)
		printf '%s\n    "%s": {"coalesce": {"unreadable": "%s"}, "rings": {"unreadable": "%s"}, "channels": {"unreadable": "%s"}, "features": {"unreadable": "%s"}}' "$sep" "$e" "$why" "$why" "$why" "$why"
		sep=,
	done
	printf '\n  },\n  "netdev": {"napis": {"unreadable": "%s"}, "queues": {"unreadable": "%s"}},\n  "processes": [' "$why" "$why"
	cat "$root"/proc/[0-9]*/comm 2>/dev/null | json_escape | awk '{ printf "%s\n    \"%s\"", (NR > 1 ? "," : ""), $0 }'
	printf '\n  ]\n}\n'
} >"$dir/netlink.json"

kernel=$(cat "$root/proc/sys/kernel/osrelease" 2>/dev/null | json_escape)
hostname=$(cat "$root/proc/sys/kernel/hostname" 2>/dev/null | json_escape)
cat >"$dir/manifest.json" <<JSON
{
  "schema": "nictune.capture/v1",
  "tool_version": "@VERSION@ (capture script)",
  "os": "linux",
  "kernel": "$kernel",
  "hostname": "$hostname",
  "captured_at_unix": $(date +%s),
  "netns": null
}
JSON

@PACK@

# shellcheck shell=bash disable=SC2034  # PR_NOTE is the caller's to print
# bench/page_reporting.sh — hold the host's free page reporting off for a
# benchmark run and put it back after (sourced by bench/lib.sh, so by
# bench/run.sh and bench/peers.sh, and by bench/qos/run.sh).
#
# This VM's balloon hands the guest
# memory the kernel frees back to its host (/sys/module/page_reporting:
# free page reporting, here with min_free_ms 0, so at once), and the next
# allocation of such a page faults in the host.  A cache drop frees
# gigabytes, so the read after it fills the page cache from memory the host
# must back again: the copy into the cache then runs at a third of its speed
# (perf: mount.pfs's memcpy in fuse_copy_folio from 19 % to 61 % of the
# samples, the same bytes, no disk I/O), whichever target happens to draw
# those pages.  It made the targets' "fast and slow modes" of earlier runs.
# PAGE_REPORTING=hold (the default) defers reporting for the run
# (min_free_ms to 300 s, max_waiting_mib to 1 TiB) and page_reporting_restore
# puts the old values back; =leave measures the machine as it is.  A kernel
# without the two knobs is left as it is; the report says which it was.
PR=/sys/module/page_reporting/parameters
PR_SAVED=""
page_reporting_hold() {
	[ -r "$PR/reported_kib" ] || { PR_NOTE="no free page reporting on this machine"; return 0; }
	PR_KIB0=$(cat "$PR/reported_kib")
	if [ "${PAGE_REPORTING:-hold}" != hold ]; then
		PR_NOTE="free page reporting left on (PAGE_REPORTING=${PAGE_REPORTING})"
	elif [ -w "$PR/min_free_ms" ] && [ -w "$PR/max_waiting_mib" ]; then
		PR_SAVED="$(cat "$PR/min_free_ms") $(cat "$PR/max_waiting_mib")"
		if echo 300000 >"$PR/min_free_ms" && echo 1048576 >"$PR/max_waiting_mib"; then
			PR_NOTE="free page reporting held for the run (min_free_ms ${PR_SAVED% *} -> 300000, max_waiting_mib ${PR_SAVED#* } -> 1048576; restored at the end)"
		else
			page_reporting_restore
			PR_NOTE="free page reporting could not be held (its knobs refused the values)"
		fi
	else
		PR_NOTE="free page reporting on, and this kernel has no knobs to hold it"
	fi
}
page_reporting_restore() {
	[ -n "$PR_SAVED" ] || return 0
	echo "${PR_SAVED% *}" >"$PR/min_free_ms" 2>/dev/null || true
	echo "${PR_SAVED#* }" >"$PR/max_waiting_mib" 2>/dev/null || true
	PR_SAVED=""
}
# MiB the guest handed back to the host since page_reporting_hold ("-" if unknown)
page_reporting_mib() {
	[ -n "${PR_KIB0:-}" ] && [ -r "$PR/reported_kib" ] || { echo -; return 0; }
	echo $(( ($(cat "$PR/reported_kib") - PR_KIB0) / 1024 ))
}

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kconfig.sh <bench|debug|dmadebug|modular|nopacket>: write the .config of a kernel kind into its O=
# directory (tinyconfig + fragments + olddefconfig) and check that every
# option the fragments ask for made it. The .config is only rewritten when
# it changes, so that an unchanged config never throws ccache's work away.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kind=${1:?usage: kconfig.sh bench|debug|dmadebug|modular|nopacket}
case $kind in
bench) frags=("$TOP/configs/tpacket4.config") ;;
debug) frags=("$TOP/configs/tpacket4.config" "$TOP/configs/debug.config") ;;
# The debug config with DMA API debugging (lib.sh's wire_dmadebug).
dmadebug) frags=("$TOP/configs/tpacket4.config" "$TOP/configs/debug.config" "$TOP/configs/dmadebug.config") ;;
# check-series only: the bench config with AF_PACKET and the drivers =m.
modular) frags=("$TOP/configs/tpacket4.config" "$TOP/configs/modular.config") ;;
# check-series only: the modular config without packet sockets.
nopacket) frags=("$TOP/configs/tpacket4.config" "$TOP/configs/modular.config" "$TOP/configs/nopacket.config") ;;
*) die "unknown kernel kind '$kind'" ;;
esac

# TP4_TREE=<dir> OBJ=<dir> in the environment: the config of that tree in that
# O= directory (new_warnings' copy of the base).
obj=${OBJ:-$BUILD/obj-$kind}
tmp=$obj.kconfig
rm -rf "$tmp"; mkdir -p "$tmp" "$obj"
make -s -C "$TREE" O="$tmp" HOSTCC="$CC_WRAP" tinyconfig >/dev/null
KCONFIG_CONFIG=$tmp/.config "$TREE/scripts/kconfig/merge_config.sh" -m \
	-O "$tmp" "$tmp/.config" "${frags[@]}" >"$tmp/merge.log"
make -s -C "$TREE" O="$tmp" HOSTCC="$CC_WRAP" olddefconfig >/dev/null

# merge_config drops options whose dependencies are missing: say which.
# The last fragment that names a symbol decides it, as in merge_config.sh.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) want=$line; sym=${line%%=*} ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want="# $sym is not set" ;;
	*) continue ;;
	esac
	got=$(grep -E "^($sym=|# $sym is not set)" "$tmp/.config" || true)
	# A symbol whose dependencies are off is not in the .config: off.
	[ -z "$got" ] && [ "$want" = "# $sym is not set" ] && got=$want
	if [ "$got" != "$want" ]; then
		# Symbols this tree does not know yet (later patches add them) are fine.
		if ! grep -rqs --include='Kconfig*' -E "^(menu)?config ${sym#CONFIG_}\$" "$TREE"; then
			continue
		fi
		warn "$kind config: asked for '$want', got '${got:-nothing}'"
		bad=1
	fi
done < <(cat "${frags[@]}" | tac | awk '
	/^CONFIG_[A-Za-z0-9_]+=/ { s = $0; sub(/=.*/, "", s) }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { s = $2 }
	s != "" && !(s in seen) { seen[s]; print }
	{ s = "" }')
[ $bad = 0 ] || die "the $kind config does not have what configs/ asks for"

if ! cmp -s "$tmp/.config" "$obj/.config"; then
	cp "$tmp/.config" "$obj/.config"
	say "$kind config: written ($(grep -c '=[ym]' "$obj/.config") options set)"
fi
rm -rf "$tmp"

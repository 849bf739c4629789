"""The four commands the Ansible play runs on a host, fixed POSIX sh scripts whose data
are their arguments and standard input (never code): `CHECK` names what differs from
the build, `DISRUPTION` asks this build's hostc-apply what the change costs, `INSTALL`
writes what differs, `APPLY` runs the apply steps.  Kept apart from the play they serve
(targets/_ansible_roll.py) so each can be read, linted (shellcheck) and run by dash
alone."""

from __future__ import annotations

from hostc.targets._render import render
from hostc.targets.lifecycle import STAGED

__all__ = ["APPLY", "CHECK", "DISRUPTION", "INSTALL"]

#: the one writer (hostc_put, hostc_remove), the text every writing script includes
_PARTIAL = "_safe_write.sh.j2"

#: The install command, a fixed script (the data come on its standard input, never as
#: code): one line per file, `MODE BASE64 PATH` (the path last, so it may hold spaces),
#: or `absent - PATH` for a file to remove.  Its body is the one writer,
#: targets/templates/_safe_write.sh.j2 rendered, and a loop: each file goes through
#: `hostc_put ROOT PATH MODE -` (every folder on the way and the file itself checked, a
#: symbolic link refused and never followed, the file written beside its destination
#: and renamed over it, owned by root), each removal through `hostc_remove`; the first
#: refusal stops the rest, naming the path.  A file's content is decoded once to be
#: checked before it is decoded into hostc_put (a bad line writes nothing).  Arguments:
#: root, then the owner and group the check expects, which must be those hostc_put
#: gives (root, or the user that runs it where that is not root): any other would be
#: found different, and installed again, on every run.
INSTALL = (
    "set -eu\n"
    + render(_PARTIAL)
    + r"""root=$1 owner=$2 group=$3
case " $(id -un) $(id -u) : $(id -gn) $(id -g) " in
  *" $owner "*:*" $group "*) ;;
  *)
    printf 'hostc: files are written as %s:%s (root under become), not %s:%s\n' \
      "$(id -un)" "$(id -gn)" "$owner" "$group" >&2
    exit 1
    ;;
esac
while read -r mode data path; do
  [ -n "$path" ] || continue
  if [ "$mode" = absent ]; then
    hostc_remove "$root" "$path"
    if [ "$hostc_changed" = yes ]; then
      printf 'removed %s\n' "$path"
    fi
    continue
  fi
  printf '%s' "$data" | base64 -d >/dev/null
  printf '%s' "$data" | base64 -d | hostc_put "$root" "$path" "$mode" -
  printf 'installed %s\n' "$path"
done
"""
)


#: The one remote command of a run's check, a fixed script (the data are its arguments:
#: never code).  It prints `pending:<mark>` for an unfinished earlier run, then every
#: path that this host does not hold as built: missing, a symbolic link, other bytes,
#: another mode, another owner (by name or number).  A file hostc-kubelet-reset staged
#: for the next boot (under STAGED, the live one kept as the running kubelet's
#: checkpoints need it) counts as held.  Under a root other than `/` (an image), it also
#: prints `link:<folder>` for each folder on the way to a path that is a symbolic link
#: (the play refuses the root: a file would be written through it, outside the image).
#: Arguments: root, owner, group, the mark, then path, sha256, mode for each file.
CHECK = (
    r"""root=$1 owner=$2 group=$3 mark=$4
shift 4
# held FILE SHA256 MODE: a plain file with these bytes, this mode and owner
held() {
  if [ -L "$1" ] || [ ! -f "$1" ] || [ "$(sha256sum < "$1")" != "$2  -" ]; then
    return 1
  fi
  case "|$(stat -c '%a %U %G|%a %u %g' -- "$1")|" in
    *"|$3 $owner $group|"*) return 0 ;;
  esac
  return 1
}
if [ -f "$root$mark" ] && [ ! -L "$root$mark" ]; then
  printf 'pending:%s\n' "$(cat -- "$root$mark")"
fi
nl='
'
seen=$nl
while [ $# -ge 3 ]; do
  dir=${1%/*}
  while [ -n "$root" ] && [ -n "$dir" ]; do
    case $seen in
      *"$nl$dir$nl"*) break ;;
    esac
    seen=$seen$dir$nl
    if [ -L "$root$dir" ]; then
      printf 'link:%s\n' "$dir"
    fi
    dir=${dir%/*}
  done
  mode=$3
  while [ "${mode#0}" != "$mode" ]; do mode=${mode#0}; done
  if ! held "$root$1" "$2" "$mode" && ! held "$root"""
    + STAGED
    + r"""$1" "$2" "$mode"; then
    printf '%s\n' "$1"
  fi
  shift 3
done
"""
)


#: `hostc-apply --disruption` of this build (its text in base64, the first argument; the
#: rest are hostc-apply's), run from the build's copy: the host may hold an older
#: hostc-apply, or none.  Only `base64 -d` reads the text, never Jinja2 or a shell's
#: parsing of the play; it runs as `sh -c TEXT hostc-apply ARGS...`.
DISRUPTION = r"""set -eu
script=$(printf '%s' "$1" | base64 -d)
shift
exec sh -c "$script" hostc-apply "$@"
"""


#: The apply steps in one command (one module instead of one per step: each is a Python
#: start on the host, and the host may be slow).  Arguments: for each step, why it runs,
#: its word count N, then its N words, run as one command (no shell reads them: `eval`
#: sees only the references "${1}" ... "${N}", never a word's text); the first step that
#: fails stops the rest, as the loop of one module per step did.
APPLY = r"""set -eu
while [ $# -ge 2 ]; do
  printf 'hostc: %s\n' "$1"
  n=$2
  shift 2
  words='' i=1
  while [ "$i" -le "$n" ]; do
    words="$words \"\${$i}\""
    i=$((i + 1))
  done
  eval "$words"
  shift "$n"
done
"""

"""The three commands the Ansible play runs on a host, fixed POSIX sh scripts whose data
are their arguments and standard input (never code): `CHECK` names what differs from
the build, `INSTALL` writes what does, `APPLY` runs the apply steps.  Kept apart from
the play they serve (targets/ansible.py) so each can be read, linted (shellcheck) and
run by dash alone."""

from __future__ import annotations

from hostc.targets.lifecycle import STAGED

__all__ = ["APPLY", "CHECK", "INSTALL"]

#: The install command, a fixed script (the data come on its standard input, never as
#: code): one line per file, `MODE BASE64 PATH` (the path last, so it may hold spaces).
#: Each file is written beside its destination, given its mode and owner, then renamed
#: over it: a reader sees the old file or the new one, and a symbolic link there is
#: replaced, never followed.  Arguments: root, owner, group.
INSTALL = r"""set -eu
root=$1 owner=$2 group=$3 tmp=
trap 'rm -f -- "$tmp"' EXIT
while read -r mode data path; do
  [ -n "$path" ] || continue
  f=$root$path
  mkdir -p -- "${f%/*}"
  tmp=$(mktemp -- "${f%/*}/.hostc-install.XXXXXX")
  printf '%s' "$data" | base64 -d >"$tmp"
  chmod -- "$mode" "$tmp"
  chown -- "$owner:$group" "$tmp"
  mv -f -- "$tmp" "$f"
  tmp=
  printf 'installed %s\n' "$path"
done
"""


#: The one remote command of a run's check, a fixed script (the data are its arguments:
#: never code).  It prints `pending:<mark>` for an unfinished earlier run, then every
#: path that this host does not hold as built: missing, a symbolic link, other bytes,
#: another mode, another owner (by name or number).  A file hostc-kubelet-reset staged
#: for the next boot (under STAGED, the live one kept as the running kubelet's
#: checkpoints need it) counts as held.  Arguments: root, owner, group, the mark, then
#: path, sha256, mode for each file.
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
while [ $# -ge 3 ]; do
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

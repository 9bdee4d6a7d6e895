"""`kubectl storage completion bash|zsh|fish`: scripts that ask ``kubectl-storage __complete``.

Each script hands the shell's words to the same protocol kubectl uses
(:mod:`kubectl_storage.cli.completion.protocol`), so all three complete alike.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer


class Shell(StrEnum):
    """The shells with a completion script."""

    BASH = "bash"
    ZSH = "zsh"
    FISH = "fish"


BASH_SCRIPT = r"""# bash completion for kubectl-storage (kubectl storage completion bash)
# Load it in this shell:  source <(kubectl-storage completion bash)
# `kubectl storage ...` completes through kubectl when kubectl_complete-storage is on PATH.

__kubectl_storage_complete() {
    local line="${COMP_LINE:0:COMP_POINT}" cur="" out directive=0 comp prefix="" i
    local -a words=() comps=()
    read -r -a words <<< "$line"
    if [[ -n "$line" && "$line" != *[[:space:]] && ${#words[@]} -gt 0 ]]; then
        cur="${words[${#words[@]}-1]}"
        unset 'words[${#words[@]}-1]'
    fi
    out=$("${words[0]:-kubectl-storage}" __complete "${words[@]:1}" "$cur" 2>/dev/null) || return 0
    while IFS='' read -r comp; do
        [[ -z "$comp" ]] && continue
        if [[ "$comp" =~ ^:[0-9]+$ ]]; then directive=${comp:1}; continue; fi
        comps+=("${comp%%$'\t'*}")
    done <<< "$out"
    (( directive & 1 )) && return 0
    if (( ${#comps[@]} == 0 )); then
        if (( directive & 16 )); then
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        elif (( ! (directive & 4) )); then
            compopt -o default 2>/dev/null
        fi
        return 0
    fi
    (( directive & 2 )) && compopt -o nospace 2>/dev/null
    # bash replaces only the part of the word after its last COMP_WORDBREAKS character (= :).
    for (( i = ${#cur} - 1; i >= 0; i-- )); do
        if [[ "$COMP_WORDBREAKS" == *"${cur:i:1}"* ]]; then prefix="${cur:0:i+1}"; break; fi
    done
    COMPREPLY=()
    for comp in "${comps[@]}"; do
        [[ "$comp" == "$cur"* ]] && COMPREPLY+=("${comp#"$prefix"}")
    done
    return 0
}

complete -o nosort -F __kubectl_storage_complete kubectl-storage 2>/dev/null \
    || complete -F __kubectl_storage_complete kubectl-storage
"""

ZSH_SCRIPT = r"""#compdef kubectl-storage
# zsh completion for kubectl-storage (kubectl storage completion zsh)
# Load it in this shell:  source <(kubectl-storage completion zsh)
# or save it as _kubectl-storage in a directory of $fpath.
# `kubectl storage ...` completes through kubectl when kubectl_complete-storage is on PATH.

_kubectl_storage() {
    local out line value desc directive=0
    local -a lines candidates opts
    out=$(${words[1]} __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null) \
        || return 1
    lines=("${(@f)out}")
    if [[ ${lines[-1]} == :<-> ]]; then
        directive=${lines[-1]#:}
        lines=("${(@)lines[1,-2]}")
    fi
    (( directive & 1 )) && return 1
    for line in "${lines[@]}"; do
        [[ -z $line ]] && continue
        value=${line%%$'\t'*}
        desc=""
        [[ $line == *$'\t'* ]] && desc=${line#*$'\t'}
        candidates+=("${value//:/\\:}${desc:+:$desc}")
    done
    if (( ${#candidates} == 0 )); then
        if (( directive & 16 )); then
            _path_files -/
        elif (( ! (directive & 4) )); then
            _files
        fi
        return
    fi
    (( directive & 2 )) && opts+=(-S '')
    _describe -t values 'kubectl-storage' candidates "${opts[@]}"
}

if [[ "${funcstack[1]}" == "_kubectl_storage" || "${funcstack[1]}" == "_kubectl-storage" ]]; then
    _kubectl_storage "$@"
else
    compdef _kubectl_storage kubectl-storage
fi
"""

FISH_SCRIPT = r"""# fish completion for kubectl-storage (kubectl storage completion fish)
# Load it in this shell:  kubectl-storage completion fish | source
# or save it as ~/.config/fish/completions/kubectl-storage.fish
# `kubectl storage ...` completes through kubectl when kubectl_complete-storage is on PATH.

function __kubectl_storage_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] $current 2>/dev/null)
    set -l directive 0
    if test (count $out) -gt 0; and string match -qr '^:[0-9]+$' -- $out[-1]
        set directive (string sub -s 2 -- $out[-1])
        set -e out[-1]
    end
    if test (math "bitand($directive, 1)") -ne 0
        return
    end
    if test (count $out) -eq 0
        if test (math "bitand($directive, 16)") -ne 0
            __fish_complete_directories $current
        else if test (math "bitand($directive, 4)") -eq 0
            __fish_complete_path $current
        end
        return
    end
    printf '%s\n' $out
end

complete -c kubectl-storage -f -a '(__kubectl_storage_complete)'
"""

SCRIPTS = {Shell.BASH: BASH_SCRIPT, Shell.ZSH: ZSH_SCRIPT, Shell.FISH: FISH_SCRIPT}


def completion_command(
    shell: Annotated[
        Shell, typer.Argument(metavar="SHELL", help="The shell.", case_sensitive=False)
    ],
) -> None:
    """Print a shell completion script for kubectl-storage (bash, zsh or fish).

    The script completes kubectl-storage run directly: subcommands, flags and names from the
    cluster (StorageClasses, nodes, PVCs, VolumeSnapshots), honouring --kubeconfig, --context
    and -n on the line. `kubectl storage ...` needs no script: kubectl 1.26 and later asks the
    kubectl_complete-storage executable on PATH. The krew archive has it (copy it next to
    kubectl-storage in ~/.krew/bin); the single binary is it when called by that name (link
    or copy it as kubectl_complete-storage on PATH).

    Examples:

        source <(kubectl storage completion bash)

        kubectl storage completion zsh > "${fpath[1]}/_kubectl-storage"

        kubectl storage completion fish | source

        ln -s "$(which kubectl-storage)" ~/bin/kubectl_complete-storage
    """
    sys.stdout.write(SCRIPTS[shell])

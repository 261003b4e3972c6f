"""The seccomp filter: the layer that stops fork and sockets even for root.

RLIMIT_NPROC does not stop fork here: `bwrap --unshare-user --uid 65534` run by root maps the
sandbox user onto kernel uid 0, and the kernel skips the NPROC check for the initial user (a raw
`os.fork()` inside the sandbox with `prlimit --nproc=2` succeeded when tried). A seccomp filter,
handed to bubblewrap with `--seccomp FD`, applies whatever the uid.

The policy is written as libseccomp rules (through pyseccomp, which the `fn` extra installs) and
exported as the BPF program bubblewrap loads. libseccomp resolves the syscall names for the
native architecture, kills a call made under any other architecture (i386 `int 0x80` on x86-64,
say) and, on x86-64, sends x32-ABI calls to that same kill. Without pyseccomp or libseccomp there
is no filter, and `build_filter` raises SandboxUnavailable: the verifier fails closed with
`infrastructure_error`, never runs unfiltered.
"""

from __future__ import annotations

import errno
import os
from types import ModuleType
from typing import Any

from speedproof.extras import MissingExtra, require
from speedproof.ground.errors import SandboxUnavailable

# Refused with EPERM. Valgrind and Python need none of them; `execve` stays allowed because
# valgrind's launcher and `setarch` exec the next stage. A name the native architecture lacks
# (fork and vfork on aarch64) is skipped by libseccomp; a name it does not know at all raises.
DENIED_SYSCALLS: tuple[str, ...] = (
    "socket",
    "socketpair",
    "fork",
    "vfork",
    "ptrace",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "add_key",
    "request_key",
    "keyctl",
    "unshare",
    "perf_event_open",
    "setns",
    "bpf",
    "execveat",
    "userfaultfd",
    "io_uring_setup",
)
_CLONE_THREAD = 0x00010000
_INSTALL_HINT = "install the Debian package libseccomp2 (apt-get install libseccomp2)"
_NO_FALLBACK = "Function mode never runs without its seccomp filter."
SECCOMP_FEATURE = "function mode's seccomp sandbox"


def _pyseccomp() -> ModuleType:
    """pyseccomp, which loads libseccomp.so.2 with ctypes when imported."""
    try:
        return require("pyseccomp", SECCOMP_FEATURE)
    except MissingExtra as exc:
        # Still SandboxUnavailable: whoever runs the sandbox fails closed on that, whatever is
        # missing; the message is the extra's one line.
        raise SandboxUnavailable(f"{exc}. {_NO_FALLBACK}") from exc
    except (ImportError, OSError, RuntimeError, AttributeError) as exc:
        # pyseccomp raises RuntimeError when it cannot find libseccomp, OSError when the library
        # does not load, AttributeError when it lacks a symbol; ImportError is an installed but
        # broken pyseccomp.
        raise SandboxUnavailable(
            f"libseccomp cannot be loaded ({exc}); {_INSTALL_HINT}. {_NO_FALLBACK}"
        ) from exc


def _clone_flags_argument(seccomp: ModuleType) -> int:
    # s390 passes clone's stack first and its flags second; every other architecture passes the
    # flags first.
    return 1 if seccomp.system_arch() in (seccomp.Arch.S390, seccomp.Arch.S390X) else 0


def _policy(seccomp: ModuleType) -> Any:
    policy = seccomp.SyscallFilter(seccomp.ALLOW)
    policy.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    eperm = seccomp.ERRNO(errno.EPERM)
    for name in DENIED_SYSCALLS:
        policy.add_rule(eperm, name)
    # clone3 passes its flags in memory that BPF cannot read: ENOSYS makes libc fall back to clone.
    policy.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    # clone: a thread (CLONE_THREAD set) is allowed, a new process (flags & CLONE_THREAD == 0)
    # is not.
    flags = seccomp.Arg(_clone_flags_argument(seccomp), seccomp.MASKED_EQ, _CLONE_THREAD, 0)
    policy.add_rule(eperm, "clone", flags)
    return policy


def build_filter() -> bytes:
    """The filter program as bubblewrap's `--seccomp` expects it: packed `sock_filter` records."""
    seccomp = _pyseccomp()
    try:
        policy = _policy(seccomp)
        with open(os.memfd_create("seccomp"), "w+b", buffering=0) as program:
            policy.export_bpf(program)
            program.seek(0)
            return program.read()
    except OSError as exc:
        raise SandboxUnavailable(
            f"libseccomp could not build the seccomp filter ({exc}); the Debian package "
            f"libseccomp2 may be too old (2.5.4 works). {_NO_FALLBACK}"
        ) from exc

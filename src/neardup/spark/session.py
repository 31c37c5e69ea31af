"""What ``neardup dedup --engine spark`` configures before its Spark session starts.

* **Memory in local mode.** Spark's default driver heap is 1 GiB, and in local mode the
  executors run inside the driver JVM, so that heap is all the job gets: a corpus of a few
  hundred MB fails with ``java.lang.OutOfMemoryError: Java heap space``. Unless the user set
  it (``--spark-conf spark.driver.memory=...``, ``--driver-memory`` in ``PYSPARK_SUBMIT_ARGS``,
  ``SPARK_DRIVER_MEMORY``, or ``spark-defaults.conf``), the driver gets half of the machine's
  memory (or of the container's limit), at least 1 GiB and at most 32 GiB (above that the
  JVM loses compressed pointers). ``spark.executor.memory`` is not set: a local executor is
  the driver JVM, and on a cluster the cluster manager's defaults apply.
* **User settings**, ``--spark-conf KEY=VALUE``, passed to the session builder as they are.
* **Java.** Without a ``java`` to start, pyspark prints a long trace; :func:`check_java`
  raises one line that says what to install.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from neardup.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "DRIVER_MEMORY",
    "check_java",
    "check_workers",
    "default_driver_memory",
    "memory_set_by_user",
    "parse_spark_conf",
    "session_conf",
    "total_memory",
]

DRIVER_MEMORY = "spark.driver.memory"
_GIB = 1 << 30
#: The share of the machine's memory the local driver JVM gets, and its bounds.
_SHARE, _LOW, _HIGH = 0.5, 1 * _GIB, 32 * _GIB

_JAVA_HINT = (
    "Spark needs Java 17 or later and none was found (no java on PATH, JAVA_HOME unset): "
    "install a JRE (Debian/Ubuntu: apt-get install openjdk-17-jre-headless; macOS: brew install "
    "openjdk@17) or set JAVA_HOME to one"
)


def total_memory() -> int | None:
    """Bytes of physical memory, or the cgroup (container) limit when that is lower;
    ``None`` when unknown."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text(encoding="ascii").strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < total:
            total = int(text)
    return total if total > 0 else None


def default_driver_memory(total: int | None) -> str | None:
    """The local driver's heap for ``total`` bytes of memory, in Spark's notation.

    Examples:
        >>> default_driver_memory(16 << 30), default_driver_memory(1 << 30)
        ('8192m', '1024m')
        >>> default_driver_memory(256 << 30), default_driver_memory(None)
        ('32768m', None)
    """
    if total is None:
        return None
    heap = min(max(int(total * _SHARE), _LOW), _HIGH)
    return f"{heap >> 20}m"


def _defaults_files(env: Mapping[str, str]) -> list[Path]:
    dirs = [env.get("SPARK_CONF_DIR")]
    if env.get("SPARK_HOME"):
        dirs.append(str(Path(env["SPARK_HOME"]) / "conf"))
    return [Path(d) / "spark-defaults.conf" for d in dirs if d]


def memory_set_by_user(user: Mapping[str, str], env: Mapping[str, str]) -> bool:
    """Whether the driver memory was chosen already: in ``user`` (``--spark-conf``), in
    ``PYSPARK_SUBMIT_ARGS`` (``--driver-memory``, ``--conf spark.driver.memory``), in
    ``SPARK_DRIVER_MEMORY`` or in a ``spark-defaults.conf``."""
    if DRIVER_MEMORY in user or env.get("SPARK_DRIVER_MEMORY"):
        return True
    submit = env.get("PYSPARK_SUBMIT_ARGS", "")
    if "--driver-memory" in submit or DRIVER_MEMORY in submit:
        return True
    for path in _defaults_files(env):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if re.search(rf"^\s*{re.escape(DRIVER_MEMORY)}\s", text, re.MULTILINE):
            return True
    return False


def session_conf(
    *, local: bool, user: Mapping[str, str], env: Mapping[str, str], total: int | None
) -> dict[str, str]:
    """The settings to give the session builder: the user's, plus the driver memory for a
    local master whose memory nobody set.

    Examples:
        >>> session_conf(local=True, user={}, env={}, total=16 << 30)
        {'spark.driver.memory': '8192m'}
        >>> session_conf(local=True, user={"spark.driver.memory": "2g"}, env={}, total=16 << 30)
        {'spark.driver.memory': '2g'}
        >>> session_conf(local=False, user={}, env={}, total=16 << 30)
        {}
    """
    out = dict(user)
    if local and not memory_set_by_user(user, env):
        memory = default_driver_memory(total)
        if memory is not None:
            out[DRIVER_MEMORY] = memory
    return out


def parse_spark_conf(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings to a dict (a later key wins).

    Raises:
        ConfigError: an item has no ``=`` or an empty key.

    Examples:
        >>> parse_spark_conf(["spark.driver.memory=6g", "spark.sql.shuffle.partitions=64"])
        {'spark.driver.memory': '6g', 'spark.sql.shuffle.partitions': '64'}
    """
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--spark-conf takes KEY=VALUE (e.g. spark.driver.memory=6g), got {item!r}"
            )
        out[key.strip()] = value.strip()
    return out


def check_java(env: Mapping[str, str]) -> None:
    """Raise one line naming what to install when no JVM can be started.

    Raises:
        ConfigError: neither ``$JAVA_HOME/bin/java`` nor a ``java`` on ``PATH`` exists.
    """
    home = env.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return
    if shutil.which("java", path=env.get("PATH")) is not None:
        return
    raise ConfigError(_JAVA_HINT)


def gateway_failed(exc: BaseException) -> ConfigError | None:
    """A one-line error for pyspark's "Java gateway process exited" failure, else ``None``."""
    text = str(exc)
    if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
        return ConfigError(
            "Spark's JVM did not start (pyspark: Java gateway process exited); check that "
            "`java -version` shows Java 17 or later and that the --spark-conf values are "
            "valid (the lines above this one are Spark's own messages)"
        )
    return None


def check_workers(spark: SparkSession, *, local: bool) -> None:
    """One one-row job: can the Python workers import neardup?

    Raises:
        ConfigError: they cannot; the message says what to set.
    """

    def import_error(_: object) -> str:  # nested: pickled by value, runs without neardup
        try:
            import neardup  # noqa: F401
        except ImportError as exc:
            return str(exc)
        return ""

    python = spark.sparkContext.pythonExec
    try:
        errors = spark.sparkContext.parallelize([0], 1).map(import_error).collect()
    except Exception as exc:  # a worker that cannot start: Py4J wraps it in a Java error
        lines = str(exc).strip().splitlines()
        errors = [lines[0][:200] if lines else type(exc).__name__]
    if not any(errors):
        return
    where = "this machine" if local else "every executor"
    raise ConfigError(
        f"the Spark workers' Python {python!r} cannot import neardup ({errors[0]}); set "
        f"PYSPARK_PYTHON (spark-submit: --conf spark.pyspark.python=...) to a Python that has "
        f"neardup installed on {where}"
    )

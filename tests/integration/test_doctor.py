"""`appliance doctor` on this machine's real parts: a real journal (SQLite, tampered with by
hand), a real AT-SPI session (Xvfb + dbus + the GTK test app), a session bus that hangs, the
installed speech models, and what this machine lacks (no /dev/uinput, no sound card)."""

from __future__ import annotations

import json
import math
import os
import re
import socket
import subprocess
import threading
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from appliance.health import journal as journal_health
from appliance.health.check import Check, Probe
from appliance.health.doctor import line, only, probes, report, run_all
from appliance.journal.application import Journal
from tests.apps.atspi_harness import headless_session, start_app, wait_for_app
from tests.cli_runner import APPLIANCE, run
from tests.integration.test_journal import executed_turn
from tests.integration.test_journal_integrity import Raw

CHECKS = ["microphone", "speaker", "switch", "speech_models", "language_model", "atspi",
          "uinput", "disk", "journal"]


def doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real `appliance doctor` process; a hang fails the test through the timeout."""
    return subprocess.run([str(APPLIANCE), "doctor", *args], capture_output=True, text=True,
                          timeout=240, check=False, env=env)


def answers(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    data: dict[str, Any] = json.loads(result.stdout)
    return {c["check"]: c for c in data["checks"]}


def assert_one_line_problem(result: subprocess.CompletedProcess[str], *names: str) -> None:
    """Exit 1, no traceback, and stderr's one line names the parts with a problem."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        f"appliance: a problem with: {', '.join(names)}"], result.stderr


@pytest.fixture
def journal_file(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    journal = Journal(str(path))
    for i in range(3):
        executed_turn(journal, f"text {i}")
    return path


def test_an_intact_journal_is_ok_and_a_tampered_row_is_a_problem(store: str) -> None:
    """On SQLite and on the loopback PostgreSQL server."""
    journal = Journal(store)
    for i in range(3):
        executed_turn(journal, f"text {i}")
    intact = doctor("--store", store, "--only", "journal,disk")
    assert intact.returncode == 0, intact.stderr
    lines = intact.stdout.splitlines()
    assert lines[0].startswith("ok       Disk: ") and " GB free of " in lines[0]
    assert ("on PostgreSQL: check the server's disk" in lines[0]) == ("://" in store)
    assert lines[1].startswith("ok       Journal: intact: ")
    assert f"hash chain verified; head {journal.head()}" in lines[1]
    assert intact.stderr == ""

    raw = Raw(store)
    # The first event that holds the words "text 0", wherever earlier events put it.
    rows = raw("SELECT {id}, state FROM {events} ORDER BY {id}")
    row, state = next((r, bytes(st)) for r, st in rows if b"text 0" in bytes(st))
    raw("UPDATE {events} SET state = ? WHERE {id} = ?", (state.replace(b"text 0", b"text X"), row))
    tampered = doctor("--store", store, "--only", "journal", "--json")
    assert_one_line_problem(tampered, "Journal")
    found = answers(tampered)["journal"]
    assert found["state"] == "problem"
    assert found["detail"].startswith(f"damaged: event #{row} (")
    assert "appliance audit verify" in found["detail"]  # what to do


def test_a_journal_without_its_key_says_to_restore_the_key(
    journal_file: Path, tmp_path: Path,
) -> None:
    env = {**os.environ, "APPLIANCE_KEY_FILE": str(tmp_path / "elsewhere.key")}
    result = doctor("--store", str(journal_file), "--only", "journal", env=env)
    assert_one_line_problem(result, "Journal")
    assert result.stdout == (
        f"PROBLEM  Journal: cannot verify: there is no device key at {tmp_path}/elsewhere.key: "
        "run as the user whose key wrote it, or restore the device key (APPLIANCE_KEY_FILE) "
        "from its backup\n")
    assert not (tmp_path / "elsewhere.key").exists()  # doctor makes no key either


def test_no_journal_yet_is_unknown_and_does_not_fail(tmp_path: Path) -> None:
    missing = tmp_path / "none" / "journal.sqlite"
    result = doctor("--store", str(missing), "--only", "journal", "--json")
    assert result.returncode == 0, result.stderr
    found = answers(result)["journal"]
    assert found["state"] == "unknown"
    assert "first command" in found["detail"]
    assert not missing.exists()  # doctor creates nothing


def test_the_whole_doctor_on_this_machine(journal_file: Path) -> None:
    """Every check answers, in order, with the --json shape; this machine has no /dev/uinput."""
    result = doctor("--store", str(journal_file), "--json")
    assert "Traceback" not in result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"ok", "checks"} and data["ok"] is False
    assert [c["check"] for c in data["checks"]] == CHECKS
    for c in data["checks"]:
        assert set(c) == {"check", "what", "state", "detail", "took_s"}
        assert c["state"] in ("ok", "problem", "unknown")
        assert c["detail"] and "\n" not in c["detail"]
    shown = {c["check"]: c for c in data["checks"]}
    assert shown["journal"]["state"] == "ok"
    assert shown["uinput"]["state"] == "problem"
    problems = [c["what"] for c in data["checks"] if c["state"] == "problem"]
    assert_one_line_problem(result, *problems)


def test_without_uinput_the_line_says_to_load_the_module() -> None:
    assert not Path("/dev/uinput").exists(), "this test is about a machine without uinput"
    result = doctor("--only", "uinput")
    assert_one_line_problem(result, "uinput")
    assert result.stdout == (
        "PROBLEM  uinput: /dev/uinput missing: load the uinput module (sudo modprobe uinput; "
        "at boot: /etc/modules-load.d/uinput.conf holding the line uinput)\n")


def test_without_a_sound_card_microphone_and_speaker_are_clear_problems() -> None:
    """This machine has no sound card: PortAudio finds nothing to open, and says so in a line."""
    result = doctor("--only", "microphone,speaker", "--json")
    assert_one_line_problem(result, "Microphone", "Speaker")
    shown = answers(result)
    assert "no input device: plug in a USB microphone" in shown["microphone"]["detail"]
    assert "no output device: plug in a speaker" in shown["speaker"]["detail"]


def _alsa_home(tmp_path: Path, default_pcm: str) -> dict[str, str]:
    """An environment whose ALSA default device is `default_pcm` (alsa-lib's own plugins, read
    from ~/.asoundrc): real PortAudio and ALSA underneath, on a machine without a sound card."""
    (tmp_path / ".asoundrc").write_text(f"pcm.!default {{ type plug slave.pcm {default_pcm} }}\n")
    return {**os.environ, "HOME": str(tmp_path)}


def test_a_microphone_opened_and_its_level_measured(tmp_path: Path) -> None:
    """The default input is alsa-lib's file plugin reading a 440 Hz tone at amplitude 3000
    (RMS 2121: -23.8 dBFS)."""
    tone = array("h", (round(3000 * math.sin(2 * math.pi * 440 * i / 16000))
                       for i in range(16000)))
    (tmp_path / "mic.raw").write_bytes(tone.tobytes())
    env = _alsa_home(tmp_path, (
        f'{{ type file slave.pcm "null" file "/dev/null" infile "{tmp_path}/mic.raw" '
        'format "raw" }'))
    result = doctor("--only", "microphone,speaker", env=env)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout == (
        'ok       Microphone: default input "default" opened, 16 kHz, level -24 dBFS\n'
        'ok       Speaker: default output "default" opened, 16 kHz\n')


def test_a_muted_microphone_is_digital_silence(tmp_path: Path) -> None:
    result = doctor("--only", "microphone", env=_alsa_home(tmp_path, '"null"'))
    assert_one_line_problem(result, "Microphone")
    # alsa-lib's null device gives zeros but for a few stray values at buffer edges.
    assert re.fullmatch(
        r'PROBLEM  Microphone: default input "default" opened but (9\d|100)% of 0\.3 s was '
        r"digital silence: its capture is muted or switched off \(alsamixer: F4, then M or "
        r"space\)\n", result.stdout), result.stdout


def test_a_hung_audio_device_does_not_hang_doctor(tmp_path: Path) -> None:
    """The file plugin's input is a FIFO nobody writes: opening the device blocks for ever."""
    os.mkfifo(tmp_path / "stuck")
    env = _alsa_home(tmp_path, (
        f'{{ type file slave.pcm "null" file "/dev/null" infile "{tmp_path}/stuck" }}'))
    result = doctor("--only", "microphone,disk", env=env)
    assert_one_line_problem(result, "Microphone")  # stderr was given back after the hang
    assert result.stdout.splitlines()[0] == (
        "PROBLEM  Microphone: no answer within 8 s: the audio device hangs: unplug and replug "
        "it, or restart the sound server")
    assert result.stdout.splitlines()[1].startswith("ok       Disk: ")


def test_the_installed_speech_models_are_verified_and_an_unverified_copy_is_named(
    tmp_path: Path,
) -> None:
    result = doctor("--only", "speech_models", "--json")
    assert result.returncode == 0, result.stderr
    found = answers(result)["speech_models"]
    assert found["state"] == "ok"
    assert found["detail"].startswith("checksums match: ")
    assert "whisper-tiny.en" in found["detail"] and "piper-en_US-joe-medium" in found["detail"]

    # A Vosk model copied in by hand rather than installed (no archive checksum recorded).
    copied = tmp_path / "models" / "vosk-model-small-en-us-0.15"
    (copied / "am").mkdir(parents=True)
    (copied / "am" / "final.mdl").write_bytes(b"not the model")
    env = {**os.environ, "APPLIANCE_MODELS": str(tmp_path / "models")}
    bad = doctor("--only", "speech_models", env=env)
    assert_one_line_problem(bad, "Speech models")
    assert bad.stdout.startswith(
        "PROBLEM  Speech models: vosk-model-small-en-us-0.15 (unverified copy): reinstall it")


def test_language_model_default_and_a_caregivers_dead_ollama(
    journal_file: Path, tmp_path: Path,
) -> None:
    port = _free_port()  # nothing listens here: an Ollama that is not running
    store = str(journal_file)
    assert run("settings", "set", "ollama_host", f"http://127.0.0.1:{port}", "--by", "carol",
               "--store", store).code == 0
    default = answers(doctor("--store", store, "--only", "language_model", "--json"))
    found = default["language_model"]
    # Nothing answers and (here) no embedded model: the grammar alone, which is not a fault.
    assert found["state"] == "ok", found
    assert "the grammar alone plans" in found["detail"]

    assert run("settings", "set", "llm", "ollama", "--by", "carol", "--store", store).code == 0
    chosen = doctor("--store", store, "--only", "language_model")
    assert_one_line_problem(chosen, "Language model")
    assert chosen.stdout.startswith(
        f"PROBLEM  Language model: Ollama (a caregiver's choice) does not answer at "
        f"http://127.0.0.1:{port}")
    assert "systemctl start ollama" in chosen.stdout


def test_language_model_an_ollama_that_answers_and_the_embedded_model(
    journal_file: Path, tmp_path: Path,
) -> None:
    """Ollama's wire format on loopback (test_ollama.py's server, the real client over HTTP), and
    the packaged SmolLM2 GGUF with llama-cpp-python as installed here."""
    from tests.integration.test_ollama import WireServer

    store = str(journal_file)
    server = WireServer()
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        assert run("settings", "set", "ollama_host", server.url, "--by", "carol",
                   "--store", store).code == 0
        found = doctor("--store", store, "--only", "language_model")
        assert found.stdout == (f"ok       Language model: Ollama (the device's default) at "
                                f"{server.url} with qwen2.5-coder:1.5b\n"), found.stderr
        assert run("settings", "set", "ollama_model", "llama3:8b", "--by", "carol",
                   "--store", store).code == 0
        unpulled = doctor("--store", store, "--only", "language_model")
        assert_one_line_problem(unpulled, "Language model")
        assert unpulled.stdout == (
            f"PROBLEM  Language model: Ollama at {server.url} answers but has no llama3:8b: "
            "appliance models install --ollama llama3:8b\n")
    finally:
        server.shutdown()
        server.server_close()

    from appliance.intents.llm_models import PACKAGED, model_path

    smollm2 = next(m for m in PACKAGED if m.key == "smollm2")
    assert model_path(smollm2).is_file(), "scripts/setup.sh installs the SmolLM2 GGUF"
    for key, value in (("llm", "llama-cpp"), ("llama_model", "smollm2")):
        assert run("settings", "set", key, value, "--by", "carol", "--store", store).code == 0
    embedded = doctor("--store", store, "--only", "language_model")
    assert embedded.stdout == (f"ok       Language model: embedded {smollm2.name} (a caregiver's "
                               f"choice) at {model_path(smollm2)}\n"), embedded.stderr
    # The same choice on a device whose models folder is empty.
    elsewhere = {**os.environ, "APPLIANCE_MODELS_DIR": str(tmp_path)}
    missing = doctor("--store", store, "--only", "language_model", env=elsewhere)
    assert_one_line_problem(missing, "Language model")
    assert missing.stdout == (
        "PROBLEM  Language model: the embedded smollm2 model (a caregiver's choice) is missing "
        f"at {tmp_path / smollm2.filename}: scripts/llm-models.sh smollm2\n")


def test_no_switch_is_unknown_for_voice_and_a_problem_once_set_up(journal_file: Path) -> None:
    """This machine has no /dev/input at all."""
    store = str(journal_file)
    voice = answers(doctor("--store", store, "--only", "switch", "--json"))["switch"]
    assert voice["state"] == "unknown"
    assert voice["detail"].startswith("no switch found: /dev/input is missing")
    assert run("settings", "set", "scan_mode", "auto", "--by", "carol", "--store", store).code == 0
    scanning = doctor("--store", store, "--only", "switch")
    assert_one_line_problem(scanning, "Switch")
    assert scanning.stdout.startswith("PROBLEM  Switch: no switch found: /dev/input is missing")
    assert run("settings", "set", "switch_device", "Big Red", "--by", "carol",
               "--store", store).code == 0
    named = doctor("--store", store, "--only", "switch")
    assert named.stdout == (
        "PROBLEM  Switch: No switch named 'Big Red' is plugged in: plug the switch in, or set "
        "switch_device and switch_keys (appliance switch probe lists the devices)\n")


def test_atspi_in_a_real_session_counts_the_application(tmp_path: Path) -> None:
    from appliance.desktop.atspi import open_desktop

    with headless_session():
        app = start_app(tmp_path)
        try:
            wait_for_app(open_desktop(), "Juniper Test")
            result = doctor("--only", "atspi", env=dict(os.environ))
        finally:
            app.stop()
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.startswith(
        "ok       AT-SPI: session bus and accessibility bus reachable; 1 application(s) on the "
        "desktop: Juniper Test"), result.stdout


def test_atspi_without_a_session_bus_says_where_to_run(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY")}
    env["XDG_RUNTIME_DIR"] = str(tmp_path)  # no `bus` socket in it
    result = doctor("--only", "atspi", env=env)
    assert_one_line_problem(result, "AT-SPI")
    assert result.stdout.startswith("PROBLEM  AT-SPI: no session bus (")
    assert "kiosk user's graphical session" in result.stdout


def test_a_session_bus_that_never_answers_does_not_hang_doctor(tmp_path: Path) -> None:
    with _silent_socket(tmp_path / "bus") as address:
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address}
        result = doctor("--only", "atspi,disk", env=env)
    assert_one_line_problem(result, "AT-SPI")
    first, second = result.stdout.splitlines()
    assert first.startswith(f"PROBLEM  AT-SPI: the session bus at {address} does not answer")
    assert second.startswith("ok       Disk: ")  # the next check still ran


def test_a_check_that_raises_or_hangs_is_a_problem_line_and_the_rest_still_run(
    tmp_path: Path,
) -> None:
    def broken() -> Check:
        return {}["missing"]  # type: ignore[no-any-return]

    stuck = threading.Event()
    found = [
        Probe("Broken", broken, 5.0, "-"),
        Probe("Stuck", lambda: stuck.wait() and Check("Stuck", "ok", "-"), 0.3,
              "unplug it and plug it in again"),
        Probe("Disk", lambda: journal_health.disk(tmp_path), 5.0, "-"),
        Probe("Disk", lambda: journal_health.disk(tmp_path, low_bytes=1 << 62), 5.0, "-"),
    ]
    try:
        results = run_all(found)
    finally:
        stuck.set()
    lines = [line(r) for r in results]
    assert lines[0] == ("PROBLEM  Broken: the check itself failed (KeyError: 'missing'); this is "
                        "a bug in appliance doctor: please report it with this line")
    assert lines[1] == "PROBLEM  Stuck: no answer within 0.3 s: unplug it and plug it in again"
    assert lines[2].startswith("ok       Disk: ")
    assert lines[3].startswith("PROBLEM  Disk: ") and "free space (sudo apt clean" in lines[3]
    shape = report(results)
    assert shape["ok"] is False
    assert [c["state"] for c in shape["checks"]] == ["problem", "problem", "ok", "problem"]


def test_only_names_checks_and_an_unknown_one_is_a_usage_error() -> None:
    assert [p.what for p in only(probes(None), "journal, AT-SPI")] == ["AT-SPI", "Journal"]
    result = run("doctor", "--only", "journal,toaster")
    assert result.code == 2
    assert result.err == ("appliance: no check called toaster; choose from microphone, speaker, "
                          "switch, speech_models, language_model, atspi, uinput, disk, journal\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def _silent_socket(path: Path) -> Iterator[str]:
    """A Unix socket that accepts connections and never says a word: a hung bus daemon."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"unix:path={path}"
    finally:
        server.close()
        for conn in held:
            conn.close()


def test_uinput_and_the_switch_in_a_guest_that_has_them() -> None:
    """The QEMU guest's kernel has uinput and input devices (tests/vm/guest_doctor.py)."""
    from tests.vm_boot import boot_guest

    guest = boot_guest("doctor")
    made = "ok       uinput: /dev/uinput: made and removed the appliance's virtual keyboard"
    uinput_line, switch_line = guest["root"]
    assert uinput_line == made
    # Only the guest's PS/2 keyboard has a switch key: taken for the switch, it is named.
    assert switch_line.startswith('PROBLEM  Switch: no switch found: only the keyboard "AT ')
    assert "plug the switch in, or set switch_device" in switch_line
    assert guest["plugged"] == [
        'ok       Switch: "Test Switch Box" at /dev/input/event1, keys BTN_0; 1 other input '
        "device(s) left alone"]
    # /dev/uinput as hardware/70-appliance.rules leaves it: root:appliance 0660.
    assert guest["outsider"] == (
        "PROBLEM  uinput: /dev/uinput is not writable by uid 65534: add the user to the group "
        "the udev rule hardware/70-appliance.rules gives it (appliance), then log in again")
    assert guest["member"] == made

"""`parley chat`'s files (docs/protocol.md "Files"): /send-file uploads with a progress line and sends,
a message's files print as `[photo 1.2 KB beach.png]`, /save N [DIR] saves them; through a
pseudo-terminal, against a real server."""
import base64
import hashlib
import os
import re
import tempfile
import uuid

import pexpect
import requests

from test_terminal_client import _register_alice
from test_terminal_message_actions import _terminal
from test_web_files import png


def upload(server, session, name, data):
    """tus creation-with-upload: the whole file in one request; returns the upload's id."""
    metadata = f"filename {base64.b64encode(name.encode()).decode()},sha256 {base64.b64encode(hashlib.sha256(data).digest()).decode()}"
    response = requests.post(server.url + "/v1/uploads", data=data, timeout=30, headers={
        "Authorization": "Bearer " + session["token"], "Tus-Resumable": "1.0.0", "Upload-Length": str(len(data)),
        "Upload-Metadata": metadata, "Content-Type": "application/offset+octet-stream"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_files_print_as_tags_save_to_a_folder_and_send_file_uploads_and_sends(server):
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as folder:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob, "Alice Liddell")
        picture = png(120, 80)
        photo = upload(server, bob, "beach.png", picture)
        response = requests.post(server.url + "/v1/messages", timeout=10, headers={"Authorization": "Bearer " + bob["token"]},
                                 json={"clientId": str(uuid.uuid4()), "recipientId": alice_id, "text": "the beach",
                                       "attachments": [{"uploadId": photo}]})
        assert response.status_code == 201, response.text
        conversation = response.json()["message"]["conversationId"]

        terminal = _terminal(home)
        terminal.sendline("/help")
        terminal.expect(re.escape("Files: /send-file PATH [CAPTION] · /save N [DIR]"))
        terminal.sendline("/open 1")
        terminal.expect(r"\[(\d+)\] [^\r\n]*Bob Builder: the beach \[photo [0-9.]+ (?:bytes|KB) beach\.png\]")
        number = terminal.match.group(1)
        terminal.sendline(f"/save {number} {folder}")
        terminal.expect(re.escape("Saved " + os.path.join(folder, "beach.png")))
        with open(os.path.join(folder, "beach.png"), "rb") as saved:
            assert saved.read() == picture
        terminal.sendline("/save 99")
        terminal.expect(re.escape("Usage: /save N [DIR]"))
        one = upload(server, bob, "one.txt", b"x")
        response = requests.post(server.url + "/v1/messages", timeout=10, headers={"Authorization": "Bearer " + bob["token"]},
                                 json={"clientId": str(uuid.uuid4()), "conversationId": conversation, "text": "one",
                                       "attachments": [{"uploadId": one}]})
        assert response.status_code == 201, response.text
        terminal.expect(re.escape("Bob Builder: one [file 1 byte one.txt]"))

        # /send-file: a 2.5 MB file goes up in parts, with progress, then the message with its caption.
        data = os.urandom(2_500_000)
        path = os.path.join(folder, "report 2026.bin")
        with open(path, "wb") as file:
            file.write(data)
        terminal.sendline(f'/send-file "{path}" the report')
        terminal.expect(re.escape("Uploading report 2026.bin… 0%"))
        terminal.expect(re.escape('✓ "the report"'), timeout=30)
        terminal.sendline("/send-file /no/such/file")
        terminal.expect(re.escape("Not sent: Cannot read /no/such/file."))
        # A folder or a device is refused at once: it once crashed the client, at every later start too.
        for not_a_file in (folder, "/dev/zero"):
            terminal.sendline(f"/send-file {not_a_file}")
            terminal.expect(re.escape(f"Not sent: Cannot send {not_a_file}: a folder, a device or a pipe is not a file."))

        def bobs_history():
            return requests.get(f"{server.url}/v1/conversations/{conversation}/messages", timeout=10,
                                headers={"Authorization": "Bearer " + bob["token"]}).json()["messages"]
        import time
        deadline = time.monotonic() + 30
        while not any(m.get("attachments") and m["senderId"] == alice_id for m in bobs_history()):
            assert time.monotonic() < deadline, "Alice's file never arrived"
            time.sleep(0.1)
        sent = next(m for m in bobs_history() if m["senderId"] == alice_id and m.get("attachments"))
        assert sent["text"] == "the report" and sent["attachments"][0]["name"] == "report 2026.bin"
        assert sent["attachments"][0]["size"] == len(data)
        file_id = sent["attachments"][0]["id"]
        content = requests.get(f"{server.url}/v1/files/{file_id}/content", headers={"Authorization": "Bearer " + bob["token"]}, timeout=30)
        assert content.content == data
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_file_the_server_refuses_fails_and_the_terminal_takes_the_next_line(monkeypatch):
    """A failed /send-file (here: over the server's size limit) prints why, and what is typed next is
    handled: the terminal once waited for a failed upload's progress for ever."""
    from conftest import Server
    monkeypatch.setenv("PARLEY_MAX_UPLOAD_BYTES", "1000000")
    with tempfile.TemporaryDirectory() as directory, tempfile.TemporaryDirectory() as home:
        server = Server(directory)
        server.start()
        try:
            bob = server.register("bob", "Bob Builder")
            alice_id = _register_alice(server, home, bob, "Alice Liddell")
            conversation = server.send(bob, "send me the file", recipient=alice_id)["conversationId"]
            path = os.path.join(home, "two.bin")
            with open(path, "wb") as file:
                file.write(os.urandom(2_000_000))
            terminal = _terminal(home)
            terminal.sendline("/open 1")
            terminal.expect("Bob Builder: send me the file")
            terminal.sendline(f"/send-file {path} too big")
            terminal.expect(re.escape("! failed: A file may have at most"))  # said once, by its status line
            assert "A file may have at most" not in terminal.before, terminal.before
            terminal.sendline("typed after the failure")
            terminal.expect(re.escape('✓ "typed after the failure"'))
            assert "A file may have at most" not in terminal.before, terminal.before
            terminal.sendline("/open 1")  # the chat again: the failed file says it was not sent, not "uploading"
            terminal.expect(re.escape("too big [file 2.0 MB two.bin, not sent] ! failed"))
            terminal.sendline("/retry")  # fails again the same way, and says so (it once said nothing more)
            terminal.expect(re.escape("Sending again: 1 message."))
            terminal.expect(re.escape("! failed: A file may have at most"))
            texts = [m.get("text") for m in server.history(bob, conversation)]
            assert texts[-1] == "typed after the failure" and "too big" not in texts, texts
            terminal.sendline("/quit")
            terminal.expect(pexpect.EOF)
        finally:
            server.stop()


def test_send_file_takes_a_photos_place_out_and_send_original_keeps_every_byte(server):
    """/send-file: the server blanks a photo's metadata (here a PNG text chunk saying where it was
    taken), same size, same pixels; /send-original sends it as it was (tus metadata `original`)."""
    import struct
    import time
    import zlib
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as folder:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob, "Alice Liddell")
        conversation = server.send(bob, "a photo?", recipient=alice_id)["conversationId"]
        plain = png(40, 30)
        text = b"tEXtLocation\x00GPS 48.8584N 2.2945E"
        photo = plain[:-12] + struct.pack(">I", len(text) - 4) + text + struct.pack(">I", zlib.crc32(text)) + plain[-12:]
        path = os.path.join(folder, "eiffel.png")
        with open(path, "wb") as file:
            file.write(photo)
        terminal = _terminal(home)
        terminal.sendline("/open 1")
        terminal.expect("Bob Builder: a photo?")
        terminal.sendline(f"/send-file {path} stripped")
        terminal.expect(re.escape('✓ "stripped"'), timeout=30)
        terminal.sendline(f"/send-original {path} as it was")
        terminal.expect(re.escape('✓ "as it was"'), timeout=30)
        deadline = time.monotonic() + 30
        while len(files := [m for m in server.history(bob, conversation) if m.get("attachments")]) < 2:
            assert time.monotonic() < deadline, "Alice's photos never arrived"
            time.sleep(0.1)
        served = {m["text"]: requests.get(f"{server.url}/v1/files/{m['attachments'][0]['id']}/content", timeout=30,
                                          headers={"Authorization": "Bearer " + bob["token"]}).content for m in files}
        assert len(served["stripped"]) == len(photo) and b"48.8584" not in served["stripped"]
        assert served["stripped"][:len(plain) - 12] == plain[:-12], "the same image"
        assert served["as it was"] == photo
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)

"""A file uploading while its sender is removed from the group (uploads.js rule 8): the upload stops at
the next chunk and says why, instead of sending every byte for a message the server will refuse; back
in the group, Retry goes on from where the server is and the message arrives once. The upload is held
after its first MiB by the page's gate (test_web_files.py GATE), so the removal lands mid-upload by
construction."""
import os
import uuid

import requests
from selenium.webdriver.common.by import By

from test_web_actions import open_chat
from test_web_files import GATE, MIB, attachments_of, headers, last, link, send_held_after_one_chunk, served, write
from test_web_groups import call, crew, wait


def test_an_upload_stops_when_i_am_removed_and_retry_goes_on_once_i_am_back(server, browsers, tmp_path):
    ada, grace, alan, group = crew(server, "Plans")
    server.send(ada, "send me the plan", conversation=group)
    g = open_chat(browsers, server, grace, group, script=GATE)
    data = os.urandom(3 * MIB + 4321)
    entry = send_held_after_one_chunk(g, grace, write(tmp_path, "plan.bin", data), "the plan")
    upload_id = entry["attachments"][0]["uploadId"]

    removed = call(server, ada, "POST", f"/v1/conversations/{group}/members/{grace['user']['id']}/remove", {"clientId": str(uuid.uuid4())})
    assert removed.status_code == 201, removed.text
    wait(g, lambda d: d.execute_script("return !document.getElementById('left-notice').hidden"))
    g.execute_script("window.__release()")  # the chunk held goes; the next is not sent
    row = wait(g, lambda d: (m := last(d)) and m["uploads"] and m["uploads"][0]["retry"] and m)
    assert row["uploads"][0]["status"] == "“plan.bin” was not sent: you are no longer a member of this group.", row
    head = requests.head(f"{server.url}/v1/uploads/{upload_id}", headers=headers(grace), timeout=10)
    assert head.status_code == 200 and head.headers["Upload-Offset"] == str(2 * MIB), "stopped after the chunk in flight"
    assert [m.get("text") for m in server.history(ada, group)][-1] != "the plan"

    # Back in the group: Retry goes on from the server's offset, and the message arrives once.
    added = call(server, ada, "POST", f"/v1/conversations/{group}/members", {"clientId": str(uuid.uuid4()), "userIds": [grace["user"]["id"]]})
    assert added.status_code == 201, added.text
    wait(g, lambda d: d.execute_script("return document.getElementById('left-notice').hidden"))
    g.find_element(By.CSS_SELECTOR, "#message-list .upload [data-action=retry]").click()
    wait(g, lambda d: (m := last(d)) and m["text"] == "the plan" and m["seq"] and m["status"] != "sending", timeout=30)
    [message] = [m for m in attachments_of(server, ada, group) if m["text"] == "the plan"]
    assert served(server, link(server, ada, message["attachments"][0]["id"])).content == data

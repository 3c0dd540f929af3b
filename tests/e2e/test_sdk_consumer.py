"""The SDK used as an app would: Examples/EchoBot (a package of its own, whose source scripts/test
builds as the main package's EchoBot target, and whose manifest it checks) signs in through ParleySDK, answers messages through its outbox, and lists its chats through
ParleyViewModels, against a real server."""
import subprocess

import requests

from conftest import ROOT

BOT = ROOT / ".build" / "debug" / "EchoBot"


def test_an_app_package_using_the_sdk_answers_messages(server):
    assert BOT.exists(), "scripts/test builds EchoBot (swift build --build-tests) before the end-to-end tests"
    ada = server.register("ada", "Ada Lovelace")
    bot = subprocess.Popen([str(BOT), server.url, "echobot", "echo-password-1", "2"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert bot.stdout.readline().strip() == "online as echobot"
        found = requests.get(server.url + "/v1/users?query=echobot", headers={"Authorization": "Bearer " + ada["token"]}, timeout=10)
        bot_id = next(u["id"] for u in found.json()["users"] if u["username"] == "echobot")
        first = server.send(ada, "hello bot", recipient=bot_id)
        server.send(ada, "second", conversation=first["conversationId"])
        out, err = bot.communicate(timeout=60)
        assert bot.returncode == 0, err
        assert "Ada Lovelace: You: echo: second" in out
        texts = [m["text"] for m in server.history(ada, first["conversationId"])]
        assert sorted(texts) == sorted(["hello bot", "second", "echo: hello bot", "echo: second"])
        assert texts.count("echo: hello bot") == 1 and texts.count("echo: second") == 1
    finally:
        if bot.poll() is None:
            bot.kill()

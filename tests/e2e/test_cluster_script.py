"""`scripts/cluster` itself: a node killed under it is restarted with --restart, and stops the cluster without."""
import os
import signal
import tempfile
import time
import uuid

import requests

from conftest import Cluster


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def wait_for(what, predicate, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def ready(url):
    try:
        return requests.get(url + "/readyz", timeout=2).ok
    except requests.ConnectionError:
        return False


def test_a_node_killed_under_the_cluster_comes_back_with_restart():
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        cluster = Cluster(directory, restart=True)
        cluster.start()
        try:
            alice, bob = cluster.register("alice", "Alice"), cluster.register("bob", "Bob")
            first = cluster.send(alice, "before the kill", recipient=bob["user"]["id"])
            killed = cluster.node_pid(1)
            os.kill(killed, signal.SIGKILL)
            wait_for("node 1 restarted", lambda: cluster.node_pid(1) != killed and ready(cluster.node_urls[0]))
            assert not alive(killed) and cluster.process.poll() is None, "the cluster kept running"
            # The restarted node itself takes a send, and the load balancer goes on answering.
            direct = requests.post(cluster.node_urls[0] + "/v1/messages", timeout=10,
                                   json={"clientId": str(uuid.uuid4()), "conversationId": first["conversationId"],
                                         "text": "to node 1"}, headers={"Authorization": "Bearer " + bob["token"]})
            assert direct.status_code == 201, direct.text
            sent = [direct.json()["message"]] + [
                cluster.send(bob, f"after {i}", conversation=first["conversationId"]) for i in range(4)]
            texts = [m["text"] for m in cluster.history(alice, first["conversationId"])]
            assert texts == ["before the kill"] + [m["text"] for m in sent]
            nodes = [cluster.node_pid(1), cluster.node_pid(2)]
        finally:
            cluster.stop()
        assert not any(alive(pid) for pid in nodes), "stopping the cluster stops the restarted node too"


def test_without_restart_a_node_exiting_stops_the_whole_cluster():
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        cluster = Cluster(directory)
        cluster.start()
        try:
            other = cluster.node_pid(2)
            os.kill(cluster.node_pid(1), signal.SIGKILL)
            cluster.process.wait(timeout=60)
            wait_for("node 2 stopped", lambda: not alive(other), seconds=10)
        finally:
            cluster.stop()

"""The Huddle protocol's request/reply over one `websockets` connection, shared by the bench
clients: requests get ids, and the reply with the matching id is returned (anything else that
arrives meanwhile — events — is skipped)."""
import asyncio
import json


class Session:
    def __init__(self, ws):
        self.ws = ws
        self.counter = 0

    async def request(self, op, **args):
        self.counter += 1
        rid = str(self.counter)
        await self.ws.send(json.dumps(dict(id=rid, op=op, **args)))
        while True:
            message = json.loads(await self.ws.recv())
            if message.get("id") == rid:
                return message

    async def signup(self, name):
        """Signs up `name` (the bench servers run with --kdf-iterations 1000) or raises. A refusal
        that names a retry (the server hashes a few sign-ups per address at once) is retried."""
        while True:
            reply = await self.request("signup", username=name, email=name + "@example.com", password="pw-%s-secret" % name)
            retry = reply.get("error", {}).get("retry_after_ms")
            if reply.get("ok") or retry is None:
                break
            await asyncio.sleep(retry / 1000)
        if not reply.get("ok"):
            raise RuntimeError("signup: %r" % reply)
        return reply

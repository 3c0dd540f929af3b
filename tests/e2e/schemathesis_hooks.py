"""What openapi.yaml's custom formats mean, for schemathesis (loaded through SCHEMATHESIS_HOOKS by
test_api_fuzzing.py): JSON Schema cannot say "one grapheme cluster that is an emoji", so the spec
names the format and this says which strings have it."""
import base64

import schemathesis
from hypothesis import strategies as st

# Single emoji of every shape the server must accept: presentation emoji, a text-default symbol
# made emoji by U+FE0F, a skin tone, a ZWJ family, a flag, a keycap, a tag sequence.
EMOJI = ["👍", "❤️", "😂", "🎉", "🙏", "👍🏽", "👨‍👩‍👧", "🇯🇵", "1️⃣", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "✔️", "🫠"]

schemathesis.openapi.format("emoji", st.sampled_from(EMOJI))

# A Web Push subscription as browsers make them: a public https push service (never contacted: the
# fuzzing user is sent nothing that would be pushed), a P-256 public key that is a point on the
# curve, a 16-byte secret. Random bytes of the right length are not keys, and the server rightly
# answers 400 for them.
ENDPOINTS = st.builds(lambda token: f"https://push.services.example/wpush/v2/{token}",
                      st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=8, max_size=120))
P256_KEYS = ["BJW4s5D8Peg5a-uXtQ30bJcnzZ9UWZY-WuEkDnyYJOxCjO-xDLxaeG0IgxfkaoL7jpdLXlmKTEveo0uGiOSDZFo",
             "BL94rzvhnTd6Nk-JywyivRdABMFkDQCtpPHmcffzUDr6CueAHa0yVuOAM2mcbMGcSalKRCKjoxZPSJ2kyHLEvv4",
             "BAfuNCI127rbgHRyZyB3gsC4SsUXArYBwsmd0ZZhKzL_lQbmsUTigi01mNqO27JMuaLVes6CqOF-uQ6VQiwZE9I"]
AUTH_SECRETS = ["aUQgscTOrLuKMO6NhWWK1g", "Q8cJ3HghtpgcEkQUILnq9g"]

schemathesis.openapi.format("webpush-endpoint", ENDPOINTS)
schemathesis.openapi.format("p256-public-key", st.sampled_from(P256_KEYS))
schemathesis.openapi.format("webpush-auth", st.sampled_from(AUTH_SECRETS))

# tus `Upload-Metadata` as tus clients write it: `key base64` pairs, the file name UTF-8 (any script),
# the type a hint; a `sha256` promise is left out (a random one would rightly fail the upload).
NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40)
TYPES = st.sampled_from(["image/png", "image/jpeg", "application/pdf", "text/plain", "application/octet-stream"])
schemathesis.openapi.format("tus-metadata", st.builds(
    lambda name, kind: f"filename {base64.b64encode(name.encode()).decode()},filetype {base64.b64encode(kind.encode()).decode()}",
    NAMES, TYPES))

# A client's thumbnail: base64 of a small PNG or JPEG (these are real ones, 1x1).
THUMBNAILS = ["iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==",
              "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q=="]
schemathesis.openapi.format("thumbnail", st.sampled_from(THUMBNAILS))

# tus PATCH bodies are raw bytes (`application/offset+octet-stream`): a generated binary string as they are.
@schemathesis.serializer("application/offset+octet-stream")
def offset_stream(ctx, value):
    return value if isinstance(value, bytes) else str(value).encode()

"""What openapi.yaml's custom formats mean, for schemathesis (loaded through SCHEMATHESIS_HOOKS by
test_api_fuzzing.py): JSON Schema cannot say "one grapheme cluster that is an emoji", so the spec
names the format and this says which strings have it."""
import schemathesis
from hypothesis import strategies as st

# Single emoji of every shape the server must accept: presentation emoji, a text-default symbol
# made emoji by U+FE0F, a skin tone, a ZWJ family, a flag, a keycap, a tag sequence.
EMOJI = ["👍", "❤️", "😂", "🎉", "🙏", "👍🏽", "👨‍👩‍👧", "🇯🇵", "1️⃣", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "✔️", "🫠"]

schemathesis.openapi.format("emoji", st.sampled_from(EMOJI))

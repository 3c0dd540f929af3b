import ParleyCore
import ParleyStore

/// The data set of `parley bench search`: `conversations` direct conversations, `memberOf` of them
/// with the measured user; `messages` spread evenly over them, made from a fixed vocabulary (a
/// few words common, most rare, as in real chats), one in ten Japanese. Deterministic for a seed.
struct SearchBenchData {
    var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        // xorshift64*: fast, and the same data for the same seed on every machine.
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// 4,000 made-up words from syllables; word `i` is drawn with weight about 1/(i+1).
    static let vocabulary: [String] = {
        let syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "len", "mar", "sol", "tran"]
        return (0..<4_000).map { index in
            var word = "", value = index + 17
            while value > 0 {
                word += syllables[value % syllables.count]
                value /= syllables.count
            }
            return word
        }
    }()

    static let japanese = ["東京で会いましょう", "明日の会議は十時です", "ありがとうございます", "駅の近くのカフェ", "写真を送ります", "週末は京都に行きます"]

    mutating func word() -> String {
        // A roughly Zipfian pick: squaring a uniform value favours the first words.
        let u = Double(below(1_000_000)) / 1_000_000
        return Self.vocabulary[min(Self.vocabulary.count - 1, Int(u * u * u * Double(Self.vocabulary.count)))]
    }

    mutating func text() -> String {
        if below(10) == 0 { return Self.japanese[below(Self.japanese.count)] + " " + String(below(1000)) }
        return (0..<(3 + below(12))).map { _ in word() }.joined(separator: " ")
    }
}

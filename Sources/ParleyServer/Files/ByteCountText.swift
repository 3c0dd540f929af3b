/// Byte counts as people read them in error messages ("100 MiB").
enum ByteCountText {
    static func text(_ bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) bytes" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) \(units[unit])" : "\(rounded) \(units[unit])"
    }
}

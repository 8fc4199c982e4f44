/// Picks the declared name an operator most likely meant when they typed an unknown one.
enum NameSuggestion {
    /// Names within edit distance 2, or starting with what was typed. The smallest distance
    /// wins; ties go to the earliest candidate, so the answer is deterministic.
    static func closest(to typed: String, among candidates: [String]) -> String? {
        guard !typed.isEmpty else { return nil }
        var best: (name: String, distance: Int)? = nil
        for candidate in candidates {
            let distance = editDistance(typed, candidate)
            guard distance <= 2 || candidate.hasPrefix(typed) else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Optimal string alignment distance over characters, compared case-insensitively:
    /// insertions, deletions, substitutions and swaps of two neighbours each cost one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            let rowBefore = previousRow
            previousRow = row
            row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previousRow[j] + 1, row[j - 1] + 1, previousRow[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], rowBefore[j - 2] + 1)
                }
            }
        }
        return row[b.count]
    }
}

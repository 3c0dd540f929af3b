extension Validation {
    /// The regions whose flag is an emoji (Unicode's RGI flag sequences: ISO 3166-1's 249 codes and
    /// AC, CP, CQ (Emoji 16), DG, EA, EU, IC, TA, UN, XK). Any other pair of regional indicators (`🇦🇦`) draws two
    /// boxed letters, not a flag, so it is not a reaction.
    static let flagRegions: Set<String> = Set(
        """
        AC AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY
        BZ CA CC CD CF CG CH CI CK CL CM CN CO CP CQ CR CU CV CW CX CY CZ DE DG DJ DK DM DO DZ EA EC EE EG EH ER ES ET EU
        FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU IC ID IE IL IM IN
        IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG
        MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL
        PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TA TC TD
        TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM UN US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW
        """.split(whereSeparator: \.isWhitespace).map(String.init))

    /// Whether two regional indicators spell a region with a flag (``flagRegions``).
    static func isFlag(_ scalars: [Unicode.Scalar]) -> Bool {
        let letters = scalars.compactMap { Unicode.Scalar($0.value - 0x1F1E6 + 0x41) }.map(Character.init)
        return flagRegions.contains(String(letters))
    }

    /// The hair styles (`🦰` `🦱` `🦳` `🦲`): Unicode's emoji components, drawn as a person's hair
    /// only after a joiner (`👩‍🦰`); alone they show as a swatch, like a lone skin tone.
    static func isHairComponent(_ scalar: Unicode.Scalar) -> Bool { (0x1F9B0...0x1F9B3).contains(scalar.value) }
}

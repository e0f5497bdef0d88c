/// Mixed-language message text for benchmarks and tests: English with a Zipf-like word distribution,
/// French/German words with diacritics, a long tail of rare made-up words, and Chinese, Japanese and
/// Korean sentences.
enum SyntheticText {
    static let english = """
        the you to and it is that of in have for not on with this what be are do can just so was but we at like me \
        my know get all will your if about out up there go how one time good no think when now yes see they want \
        back here would really well right then okay tomorrow today meeting lunch dinner coffee work home call later \
        thanks please sorry great nice love night morning weekend train bus late early project release build test \
        server message phone email photo picture video link file document report plan idea problem question answer \
        music movie book game party birthday holiday travel hotel flight ticket price money bank shop market weather \
        rain snow sun cold hot family friend brother sister mother father kids school class teacher student doctor
        """.split(separator: " ").map(String.init)
    static let accented = "café naïve résumé déjà über Straße Müller façade crème brûlée jalapeño São Paulo Zürich coöperate".split(separator: " ").map(String.init)
    static let chinese = Array("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴切消客够板")
    static let japanese = Array("あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテト東京大阪時間電車今日明日")
    static let korean = Array("가나다라마바사아자차카타파하고노도로모보소오조초코토포호구누두루무부수우주추쿠투푸후한국어사랑친구메시지오늘내일")
    static let rareSyllables = ["zor", "blax", "quin", "fep", "tra", "mul", "dox", "vin", "kel", "pry", "sna", "gorm", "wib", "jut", "lox", "yem"]

    static func rareWord(_ random: inout SplitMix64) -> String {
        let count = 2 + random.below(2)
        return (0..<count).map { _ in rareSyllables[random.below(rareSyllables.count)] }.joined()
    }

    static func latinSentence(_ random: inout SplitMix64) -> String {
        let words = 3 + random.below(18)
        var parts: [String] = []
        parts.reserveCapacity(words)
        for _ in 0..<words {
            let roll = random.below(100)
            if roll < 4 {
                parts.append(accented[random.below(accented.count)])
            } else if roll < 7 {
                parts.append(rareWord(&random))
            } else {
                parts.append(english[random.zipfIndex(english.count)])
            }
        }
        return parts.joined(separator: " ")
    }

    static func cjkSentence(_ random: inout SplitMix64) -> String {
        let script = random.below(10)
        let alphabet = script < 7 ? chinese : script < 9 ? japanese : korean
        let length = 4 + random.below(27)
        var text = ""
        for index in 0..<length {
            text.append(alphabet[random.zipfIndex(alphabet.count)])
            if index % 9 == 8 { text.append(script < 7 ? "，" : script < 9 ? "、" : " ") }
        }
        text.append(script < 9 ? "。" : ".")
        return text
    }
}

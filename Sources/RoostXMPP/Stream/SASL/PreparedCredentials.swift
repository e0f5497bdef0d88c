/// A username and password after SASLprep, as UTF-8, ready for PLAIN or SCRAM.
struct PreparedCredentials {
    let username: String
    let password: [UInt8]

    init(username rawUsername: String, password rawPassword: String) throws(SASLError) {
        let username: String
        do {
            username = try SASLPrep.prepare(rawUsername)
        } catch .prohibitedCharacter(let scalar) {
            // Naming the character helps fix a typo; a username is not a secret.
            throw .invalidUsername(reason: "it contains U+\(String(scalar.value, radix: 16, uppercase: true)), which SASLprep prohibits")
        } catch {
            throw .invalidUsername(reason: "it mixes left-to-right and right-to-left text in a way SASLprep prohibits")
        }
        guard !username.isEmpty else { throw .invalidUsername(reason: "it is empty after SASLprep") }

        let password: String
        do {
            password = try SASLPrep.prepare(rawPassword)
        } catch .prohibitedCharacter {
            throw .invalidPassword(reason: "it contains a control, private-use or other character SASLprep prohibits")
        } catch {
            throw .invalidPassword(reason: "it mixes left-to-right and right-to-left text in a way SASLprep prohibits")
        }
        guard !password.isEmpty else { throw .invalidPassword(reason: "it is empty") }

        self.username = username
        self.password = Array(password.utf8)
    }
}

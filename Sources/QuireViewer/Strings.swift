import QuireCore

/// Every string the viewer shows, in one table: English, Simplified and Traditional Chinese,
/// Japanese and Korean. `%@` stands for an argument.
public enum UIString: String, CaseIterable, Sendable {
    case firstPage, lastPage, notFound, searching, settling, noTOC, help, helpTitle, pressAnyKey, cannotShowPage, retryKey
    case cannotOpen, goTo, search, unknownKey, darkOn, darkOff
    case failureDRM, failureCorrupt, failureUnsupported, failureMissing, quitKey, progressNotSaved, resumed
}

public struct UIStrings: Sendable {
    public let language: String

    public static let languages = ["en", "zh-Hans", "zh-Hant", "ja", "ko"]

    static let table: [String: [UIString: String]] = [
        "en": [
            .failureDRM: "This book is DRM-protected and cannot be opened", .failureCorrupt: "This book is damaged or not a book",
            .failureUnsupported: "This book uses something Quire does not support", .failureMissing: "The book is not there or cannot be read",
            .quitKey: "q to quit", .progressNotSaved: "Progress not saved: %@", .resumed: "Resumed where you left off",
            .firstPage: "This is the first page", .lastPage: "This is the last page", .notFound: "Not found: %@",
            .searching: "Searching…", .settling: "Laying out…", .noTOC: "This book has no table of contents",
            .help: "space/→/l/j next · ←/h/k/bksp back · g/G first/last · :N or N⏎ page · :50% · ]/[ chapter · t contents · :p LABEL print page · / search, n/N · i info · d dark · q quit",
            .helpTitle: "Keys", .pressAnyKey: "Press any key", .cannotShowPage: "Page %@ cannot be shown: %@", .retryKey: "r to retry",
            .cannotOpen: "Cannot open the book: %@", .goTo: "Go to", .search: "Search", .unknownKey: "Unknown key: ? for help",
            .darkOn: "Dark theme", .darkOff: "Light theme",
        ],
        "zh-Hans": [
            .failureDRM: "此书受 DRM 保护，无法打开", .failureCorrupt: "此书已损坏或不是电子书", .failureUnsupported: "此书使用了 Quire 不支持的功能",
            .failureMissing: "找不到此书或无法读取", .quitKey: "按 q 退出", .progressNotSaved: "进度未保存：%@", .resumed: "已回到上次阅读处",
            .firstPage: "已是第一页", .lastPage: "已是最后一页", .notFound: "未找到：%@", .searching: "搜索中…", .settling: "排版中…",
            .noTOC: "本书没有目录",
            .help: "空格/→/l/j 下一页 · ←/h/k 上一页 · g/G 首/末页 · :N 跳页 · :50% · ]/[ 章 · t 目录 · / 搜索 · i 信息 · d 夜间 · q 退出",
            .helpTitle: "按键", .pressAnyKey: "按任意键", .cannotShowPage: "无法显示第 %@ 页：%@", .retryKey: "按 r 重试",
            .cannotOpen: "无法打开此书：%@", .goTo: "跳转", .search: "搜索", .unknownKey: "未知按键：按 ? 查看帮助",
            .darkOn: "夜间主题", .darkOff: "日间主题",
        ],
        "zh-Hant": [
            .failureDRM: "此書受 DRM 保護，無法開啟", .failureCorrupt: "此書已損毀或不是電子書", .failureUnsupported: "此書使用了 Quire 不支援的功能",
            .failureMissing: "找不到此書或無法讀取", .quitKey: "按 q 離開", .progressNotSaved: "進度未儲存：%@", .resumed: "已回到上次閱讀處",
            .firstPage: "已是第一頁", .lastPage: "已是最後一頁", .notFound: "找不到：%@", .searching: "搜尋中…", .settling: "排版中…",
            .noTOC: "本書沒有目錄",
            .help: "空白/→/l/j 下一頁 · ←/h/k 上一頁 · g/G 首/末頁 · :N 跳頁 · :50% · ]/[ 章 · t 目錄 · / 搜尋 · i 資訊 · d 夜間 · q 離開",
            .helpTitle: "按鍵", .pressAnyKey: "按任意鍵", .cannotShowPage: "無法顯示第 %@ 頁：%@", .retryKey: "按 r 重試",
            .cannotOpen: "無法開啟此書：%@", .goTo: "跳至", .search: "搜尋", .unknownKey: "未知按鍵：按 ? 檢視說明",
            .darkOn: "夜間主題", .darkOff: "日間主題",
        ],
        "ja": [
            .failureDRM: "この本は DRM で保護されていて開けません", .failureCorrupt: "この本は壊れているか、本ではありません",
            .failureUnsupported: "この本は Quire が対応していない機能を使っています", .failureMissing: "本が見つからないか読めません",
            .quitKey: "q で終了", .progressNotSaved: "進捗を保存できません：%@", .resumed: "前回の続きから",
            .firstPage: "最初のページです", .lastPage: "最後のページです", .notFound: "見つかりません：%@", .searching: "検索中…",
            .settling: "組版中…", .noTOC: "この本には目次がありません",
            .help: "スペース/→/l/j 次 · ←/h/k 前 · g/G 最初/最後 · :N ページ · :50% · ]/[ 章 · t 目次 · / 検索 · i 情報 · d ダーク · q 終了",
            .helpTitle: "キー", .pressAnyKey: "何かキーを押してください", .cannotShowPage: "%@ ページを表示できません：%@",
            .retryKey: "r で再試行", .cannotOpen: "本を開けません：%@", .goTo: "移動", .search: "検索",
            .unknownKey: "不明なキー：? でヘルプ", .darkOn: "ダークテーマ", .darkOff: "ライトテーマ",
        ],
        "ko": [
            .failureDRM: "이 책은 DRM으로 보호되어 열 수 없습니다", .failureCorrupt: "이 책은 손상되었거나 책이 아닙니다",
            .failureUnsupported: "이 책은 Quire가 지원하지 않는 기능을 사용합니다", .failureMissing: "책이 없거나 읽을 수 없습니다",
            .quitKey: "q 종료", .progressNotSaved: "진행 상황 저장 안 됨: %@", .resumed: "마지막으로 읽던 곳에서 계속",
            .firstPage: "첫 페이지입니다", .lastPage: "마지막 페이지입니다", .notFound: "찾을 수 없음: %@", .searching: "검색 중…",
            .settling: "조판 중…", .noTOC: "이 책에는 목차가 없습니다",
            .help: "스페이스/→/l/j 다음 · ←/h/k 이전 · g/G 처음/끝 · :N 페이지 · :50% · ]/[ 장 · t 목차 · / 검색 · i 정보 · d 다크 · q 종료",
            .helpTitle: "키", .pressAnyKey: "아무 키나 누르세요", .cannotShowPage: "%@ 페이지를 표시할 수 없음: %@",
            .retryKey: "r 다시 시도", .cannotOpen: "책을 열 수 없음: %@", .goTo: "이동", .search: "검색",
            .unknownKey: "알 수 없는 키: ?로 도움말", .darkOn: "다크 테마", .darkOff: "라이트 테마",
        ],
    ]

    /// `--lang`, else LC_ALL, LC_MESSAGES, LANG (zh_TW/zh_HK → Traditional), else English.
    public init(language: String? = nil, environment: [String: String] = SystemEnvironment.all) {
        let requested = language ?? ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? "en"
        self.language = UIStrings.match(requested)
    }

    static func match(_ tag: String) -> String {
        let lower = tag.lowercased().replacing("_", with: "-")
        if lower.hasPrefix("zh") {
            return lower.contains("hant") || lower.contains("-tw") || lower.contains("-hk") || lower.contains("-mo") ? "zh-Hant" : "zh-Hans"
        }
        if lower.hasPrefix("ja") { return "ja" }
        if lower.hasPrefix("ko") { return "ko" }
        return "en"
    }

    /// A language's own entry, without falling back to English (nil when missing).
    public static func rawText(_ language: String, _ key: UIString) -> String? { table[language]?[key] }

    public func text(_ key: UIString, _ arguments: String...) -> String {
        var text = UIStrings.table[language]?[key] ?? UIStrings.table["en"]![key]!
        for argument in arguments {
            guard let range = text.firstRange(of: "%@") else { break }
            text.replaceSubrange(range, with: argument)
        }
        return text
    }

    /// Terminal cells a string takes: East Asian wide and fullwidth characters take two.
    public static func cellWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + cellWidth($1) }
    }

    static func cellWidth(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.value {
        case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: return 0
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xAC00...0xD7A3,
            0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x20000...0x3FFFD:
            return 2
        default: return 1
        }
    }

    /// The string cut to `cells` terminal cells, with an ellipsis when cut.
    public static func truncated(_ text: String, toCells cells: Int) -> String {
        guard cellWidth(text) > cells else { return text }
        var result = ""
        var used = 0
        for character in text {
            let width = cellWidth(String(character))
            if used + width > cells - 1 { break }
            result.append(character)
            used += width
        }
        return result + "…"
    }
}

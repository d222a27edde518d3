import Quire

// Open a book (EPUB or PDF) and paginate it for a Kobo Clara; chapters are laid out on demand.
let arguments = CommandLine.arguments  // reader BOOK CFI OUT.png
let book = try Book.open(arguments[1])
let kobo = try Pagination(book, settings: PaginationSettings(profile: "kobo-clara"))

// Page 1: where it starts in the text.
let first = try kobo.startLocator(of: kobo.firstAddress)
print("\(book.title ?? "untitled"), page 1 starts at \(first.locations.cfi ?? first.href)")

// Jump to a CFI and render that page to PNG.
let page = try kobo.resolve(.cfi(arguments[2]))
try kobo.writePNG(page, to: arguments[3])
print("\(arguments[2]) is on page \(try kobo.pageNumber(of: page)) of \(kobo.pageCount()) → \(arguments[3])")

// Re-paginate for a phone and land on the same place in the text (never the same page number).
let phone = try kobo.repaginated(PaginationSettings(profile: "phone"))
let there = try phone.resolve(.locator(kobo.startLocator(of: page)))
print("on a phone: page \(try phone.pageNumber(of: there)) of \(phone.pageCount())")

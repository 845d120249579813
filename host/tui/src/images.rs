//! Images on tool cards: which graphics protocol the terminal speaks (kitty, sixel, iTerm2),
//! and a result's image decoded and encoded for it.
//!
//! Detection asks the terminal once, right after the first frame and before keys are read:
//! the kitty graphics query, Device Attributes (sixel), the cell size in pixels, then Device
//! Status, which every terminal answers, so the reply is complete when its answer arrives. The
//! answers are read with a deadline ([`QUERY_TIMEOUT`]) and a size cap, never from a thread
//! left behind. iTerm2 (and WezTerm, which speaks its protocol) is known by its environment;
//! WezTerm and Konsole are not trusted with kitty or sixel (their placements are unreliable).
//! Inside tmux or screen, or without colours, or with `RHO_TUI_IMAGES=off`, nothing is asked
//! and cards show the descriptor the model reads (`[image image/png, 41.2 KB]`).
//!
//! Decoding and encoding run on a blocking thread (a 4 MiB PNG takes tens of milliseconds),
//! so a frame never waits for them; the card says "drawing the image…" meanwhile.

use std::fmt;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui_image::picker::cap_parser::{Parser, QueryStdioOptions, Response};
use ratatui_image::picker::{Picker, ProtocolType};
use ratatui_image::protocol::Protocol;
use ratatui_image::{FontSize, Image, Resize};
use rho_component::ToolImage;

/// How long the terminal has to answer the graphics query.
pub const QUERY_TIMEOUT: Duration = Duration::from_millis(250);
/// Bytes of answers read at most.
const MAX_ANSWER_BYTES: usize = 4096;
/// The most rows an image takes on a card.
pub const MAX_IMAGE_ROWS: u16 = 12;
/// The most columns an image takes on a card.
pub const MAX_IMAGE_COLUMNS: u16 = 64;
/// Decoded pixels an image may have (width × height); larger images keep their descriptor.
const MAX_PIXELS: u64 = 40_000_000;

/// A terminal's graphics protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocols {
    /// The kitty graphics protocol.
    Kitty,
    /// DEC sixel.
    Sixel,
    /// iTerm2's inline images.
    Iterm2,
}

impl Protocols {
    /// Its name, as `/doctor` and the log say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Kitty => "kitty",
            Self::Sixel => "sixel",
            Self::Iterm2 => "iTerm2",
        }
    }

    fn protocol_type(self) -> ProtocolType {
        match self {
            Self::Kitty => ProtocolType::Kitty,
            Self::Sixel => ProtocolType::Sixel,
            Self::Iterm2 => ProtocolType::Iterm2,
        }
    }
}

/// What the environment says about the terminal (the variables detection reads).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TermEnv {
    /// `TERM`.
    pub term: String,
    /// `TERM_PROGRAM`.
    pub term_program: String,
    /// `LC_TERMINAL` (iTerm2 sets it, and ssh passes it on).
    pub lc_terminal: String,
    /// `TMUX` or `STY` is set.
    pub multiplexer: bool,
    /// `WEZTERM_EXECUTABLE` or `KONSOLE_VERSION` is set.
    pub unreliable_placements: bool,
    /// `RHO_TUI_IMAGES=off`.
    pub disabled: bool,
}

impl TermEnv {
    /// The process's environment.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).unwrap_or_default();
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        Self {
            term: var("TERM"),
            term_program: var("TERM_PROGRAM"),
            lc_terminal: var("LC_TERMINAL"),
            multiplexer: set("TMUX") || set("STY"),
            unreliable_placements: set("WEZTERM_EXECUTABLE") || set("KONSOLE_VERSION"),
            disabled: var("RHO_TUI_IMAGES").eq_ignore_ascii_case("off"),
        }
    }

    /// Whether the terminal is asked at all.
    pub fn worth_asking(&self) -> bool {
        !self.disabled
            && !self.multiplexer
            && !self.term.starts_with("tmux")
            && !self.term.starts_with("screen")
            && self.term != "dumb"
    }

    fn iterm2(&self) -> bool {
        const PROGRAMS: [&str; 3] = ["iTerm", "WezTerm", "mintty"];
        PROGRAMS.iter().any(|p| self.term_program.contains(p)) || self.lc_terminal.contains("iTerm")
    }
}

/// The terminal's graphics: its protocol and its cell size in pixels.
#[derive(Clone)]
pub struct Graphics {
    protocol: Protocols,
    picker: Picker,
}

impl fmt::Debug for Graphics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let font = self.picker.font_size();
        f.debug_struct("Graphics")
            .field("protocol", &self.protocol)
            .field("cell", &(font.width, font.height))
            .finish()
    }
}

impl Graphics {
    /// Asks the terminal on stdin/stdout (in raw mode, before anything else reads keys):
    /// the graphics (`None` when it draws no images rho can use) and the keys typed while
    /// the answers came, which the caller delivers before any other input.
    pub fn detect(env: &TermEnv) -> (Option<Self>, Vec<Event>) {
        if !env.worth_asking() {
            return (None, Vec::new());
        }
        let answers = query_terminal(QUERY_TIMEOUT);
        let graphics = Self::from_answers(env, &answers, window_cell_size());
        tracing::debug!(
            target: "rho_tui::images",
            protocol = graphics.as_ref().map_or("none", |g| g.protocol.name()),
            answer_bytes = answers.len()
        );
        (graphics, typed_keys(&answers))
    }

    /// The graphics that the terminal's `answers` to the query and the environment describe;
    /// `window_cell` is the cell size from the window's pixel size, when the kernel knows it.
    pub fn from_answers(env: &TermEnv, answers: &[u8], window_cell: Option<Size>) -> Option<Self> {
        let mut parser = Parser::new();
        let mut kitty = false;
        let mut sixel = false;
        let mut cell = None;
        for &byte in answers {
            for response in parser.push(char::from(byte)) {
                match response {
                    Response::Kitty => kitty = true,
                    Response::Sixel => sixel = true,
                    Response::CellSize(Some((w, h))) if w > 0 && h > 0 => {
                        cell = Some(Size::new(w, h));
                    }
                    _ => {}
                }
            }
        }
        let trusted = !env.unreliable_placements;
        let protocol = if kitty && trusted {
            Protocols::Kitty
        } else if sixel && trusted {
            Protocols::Sixel
        } else if env.iterm2() {
            Protocols::Iterm2
        } else {
            return None;
        };
        let cell = cell.or(window_cell)?;
        Some(Self::new(protocol, cell))
    }

    /// Graphics for `protocol` with cells of `cell` pixels.
    pub fn new(protocol: Protocols, cell: Size) -> Self {
        // `from_fontsize` is the constructor that takes a known cell size; its replacement
        // (`from_query_stdio`) reads stdin on a thread that outlives a terminal that does not
        // answer, which rho's own query above does not.
        #[allow(deprecated)]
        let mut picker = Picker::from_fontsize(FontSize::new(cell.width, cell.height));
        picker.set_protocol_type(protocol.protocol_type());
        Self { protocol, picker }
    }

    /// The protocol.
    pub fn protocol(&self) -> Protocols {
        self.protocol
    }

    /// Decodes `image` and encodes it to fit `columns` (at most [`MAX_IMAGE_COLUMNS`]) by
    /// [`MAX_IMAGE_ROWS`]; the reason when it cannot.
    pub fn encode(&self, image: &ToolImage, columns: u16) -> Result<CardImage, ImageError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(image.data.trim())
            .map_err(|e| ImageError::Base64(e.to_string()))?;
        let format = image::ImageFormat::from_mime_type(&image.mime_type)
            .or_else(|| image::guess_format(&bytes).ok())
            .ok_or_else(|| ImageError::Format(image.mime_type.clone()))?;
        let mut reader = image::ImageReader::with_format(std::io::Cursor::new(&bytes), format);
        let mut limits = image::Limits::default();
        limits.max_alloc = Some(MAX_PIXELS * 4);
        reader.limits(limits);
        let decoded = reader
            .decode()
            .map_err(|e| ImageError::Decode(e.to_string()))?;
        if u64::from(decoded.width()) * u64::from(decoded.height()) > MAX_PIXELS {
            return Err(ImageError::TooLarge);
        }
        let area = Size::new(columns.clamp(1, MAX_IMAGE_COLUMNS), MAX_IMAGE_ROWS);
        let protocol = self
            .picker
            .new_protocol(decoded, area, Resize::Fit(None))
            .map_err(|e| ImageError::Encode(e.to_string()))?;
        Ok(CardImage {
            size: protocol.size(),
            protocol: Arc::new(protocol),
        })
    }
}

/// Why a tool's image cannot be drawn on its card (shown there instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    /// Its data is not base64 (the decoder's reason).
    Base64(String),
    /// Its MIME type (given) is no format rho reads, nor do its bytes say one.
    Format(String),
    /// Its bytes do not decode (the decoder's reason).
    Decode(String),
    /// More pixels than rho draws.
    TooLarge,
    /// The terminal's protocol could not encode it (the reason).
    Encode(String),
}

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Base64(why) => write!(f, "the image is not valid base64 ({why})"),
            Self::Format(mime) => write!(f, "{mime} is not an image format rho reads"),
            Self::Decode(why) => write!(f, "the image could not be decoded ({why})"),
            Self::TooLarge => f.write_str("the image is too large to draw"),
            Self::Encode(why) => write!(f, "the image could not be encoded ({why})"),
        }
    }
}

impl std::error::Error for ImageError {}

/// An image encoded for the terminal, ready to draw.
#[derive(Clone)]
pub struct CardImage {
    protocol: Arc<Protocol>,
    size: Size,
}

impl CardImage {
    /// Its size in cells.
    pub fn size(&self) -> Size {
        self.size
    }

    /// Draws it with its top-left corner at `(x, y)`; nothing when it does not fit `area`.
    pub fn render(&self, x: u16, y: u16, area: Rect, buf: &mut Buffer) {
        let rect = Rect::new(x, y, self.size.width, self.size.height);
        if rect.right() > area.right() || rect.bottom() > area.bottom() {
            return;
        }
        ratatui::widgets::Widget::render(Image::new(&self.protocol), rect, buf);
    }
}

impl fmt::Debug for CardImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CardImage")
            .field("size", &(self.size.width, self.size.height))
            .finish()
    }
}

impl PartialEq for CardImage {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.protocol, &other.protocol)
    }
}

/// Where a card's image is.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageState {
    /// Being decoded and encoded.
    Drawing,
    /// Ready to draw.
    Ready(CardImage),
    /// Not drawable (the reason, shown dim under the descriptor).
    Failed(String),
}

/// Writes the query and reads the answers until the Device Status answer, `timeout`, or
/// [`MAX_ANSWER_BYTES`]. Nothing is read after it returns.
fn query_terminal(timeout: Duration) -> Vec<u8> {
    let query = Parser::query(false, QueryStdioOptions::default());
    let mut stdout = std::io::stdout();
    if stdout
        .write_all(query.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return Vec::new();
    }
    let deadline = Instant::now() + timeout;
    let stdin = std::io::stdin();
    let mut answers = Vec::new();
    let mut chunk = [0u8; 256];
    while answers.len() < MAX_ANSWER_BYTES && !has_status_answer(&answers) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || !readable(&stdin, left) {
            break;
        }
        match stdin.lock().read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => answers.extend_from_slice(&chunk[..n]),
        }
    }
    answers
}

/// The keys in `bytes` (what was read while the terminal answered) that are not answers:
/// text, Enter, Tab, Backspace, Esc and Ctrl+letter, as crossterm reports them. Escape
/// sequences (the answers, and keys such as arrows typed in those milliseconds) are dropped.
pub fn typed_keys(bytes: &[u8]) -> Vec<Event> {
    let mut keys = Vec::new();
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let key = match c {
            '\x1b' => match chars.peek().copied() {
                None => Some(KeyEvent::from(KeyCode::Esc)),
                Some('[') => {
                    chars.next();
                    // Parameters and intermediates, then one final byte.
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            break;
                        }
                    }
                    None
                }
                Some(']' | '_' | 'P' | '^') => {
                    // A string, ended by BEL or ESC \.
                    let mut escape = false;
                    for c in chars.by_ref() {
                        if c == '\x07' || (escape && c == '\\') {
                            break;
                        }
                        escape = c == '\x1b';
                    }
                    None
                }
                Some(_) => {
                    chars.next();
                    None
                }
            },
            '\r' => Some(KeyEvent::from(KeyCode::Enter)),
            '\t' => Some(KeyEvent::from(KeyCode::Tab)),
            '\x7f' | '\x08' => Some(KeyEvent::from(KeyCode::Backspace)),
            '\x01'..='\x1a' => {
                let letter = char::from(b'a' + (c as u8 - 1));
                Some(KeyEvent::new(KeyCode::Char(letter), KeyModifiers::CONTROL))
            }
            '\u{fffd}' => None,
            c if c.is_control() => None,
            c => Some(KeyEvent::from(KeyCode::Char(c))),
        };
        keys.extend(key.map(Event::Key));
    }
    keys
}

/// Whether `answers` hold the Device Status answer (`ESC [ 0 n`), the last one asked for.
fn has_status_answer(answers: &[u8]) -> bool {
    answers.windows(4).any(|w| w == b"\x1b[0n")
}

/// Whether stdin has bytes within `wait`.
fn readable(stdin: &std::io::Stdin, wait: Duration) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(stdin, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0)
}

/// The cell size from the window's size in pixels (`TIOCGWINSZ`), when the terminal fills it.
fn window_cell_size() -> Option<Size> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    if size.ws_xpixel == 0 || size.ws_ypixel == 0 || size.ws_col == 0 || size.ws_row == 0 {
        return None;
    }
    Some(Size::new(
        size.ws_xpixel / size.ws_col,
        size.ws_ypixel / size.ws_row,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2×2 PNG.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC";

    fn env() -> TermEnv {
        TermEnv {
            term: "xterm-256color".into(),
            ..TermEnv::default()
        }
    }

    const KITTY_OK: &[u8] = b"\x1b_Gi=31;OK\x1b\\";
    const DA_SIXEL: &[u8] = b"\x1b[?62;4;22c";
    const DA_PLAIN: &[u8] = b"\x1b[?62;22c";
    const CELL: &[u8] = b"\x1b[6;20;10t";
    const STATUS: &[u8] = b"\x1b[0n";

    fn answers(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn the_answers_pick_the_protocol() {
        let kitty =
            Graphics::from_answers(&env(), &answers(&[KITTY_OK, DA_SIXEL, CELL, STATUS]), None);
        assert_eq!(kitty.map(|g| g.protocol()), Some(Protocols::Kitty));
        let sixel = Graphics::from_answers(&env(), &answers(&[DA_SIXEL, CELL, STATUS]), None);
        assert_eq!(sixel.map(|g| g.protocol()), Some(Protocols::Sixel));
        let plain = Graphics::from_answers(&env(), &answers(&[DA_PLAIN, CELL, STATUS]), None);
        assert!(plain.is_none(), "no protocol: the descriptor");
        let iterm = TermEnv {
            term_program: "iTerm.app".into(),
            ..env()
        };
        let drawn = Graphics::from_answers(&iterm, &answers(&[DA_PLAIN, CELL, STATUS]), None);
        assert_eq!(drawn.map(|g| g.protocol()), Some(Protocols::Iterm2));
    }

    #[test]
    fn wezterm_and_konsole_are_not_trusted_with_kitty_or_sixel() {
        let wezterm = TermEnv {
            term_program: "WezTerm".into(),
            unreliable_placements: true,
            ..env()
        };
        let g = Graphics::from_answers(
            &wezterm,
            &answers(&[KITTY_OK, DA_SIXEL, CELL, STATUS]),
            None,
        );
        assert_eq!(g.map(|g| g.protocol()), Some(Protocols::Iterm2));
        let konsole = TermEnv {
            unreliable_placements: true,
            ..env()
        };
        assert!(
            Graphics::from_answers(
                &konsole,
                &answers(&[KITTY_OK, DA_SIXEL, CELL, STATUS]),
                None
            )
            .is_none()
        );
    }

    #[test]
    fn without_a_cell_size_nothing_is_drawn_unless_the_window_knows_it() {
        let no_cell = answers(&[KITTY_OK, DA_PLAIN, STATUS]);
        assert!(Graphics::from_answers(&env(), &no_cell, None).is_none());
        let g = Graphics::from_answers(&env(), &no_cell, Some(Size::new(9, 18)));
        assert_eq!(g.map(|g| g.protocol()), Some(Protocols::Kitty));
    }

    #[test]
    fn noise_and_garbage_in_the_answers_are_ignored() {
        let noisy = answers(&[b"abc\x1b[A", KITTY_OK, b"\x1b[?1;2$y\xff\xfe", CELL, STATUS]);
        let g = Graphics::from_answers(&env(), &noisy, None);
        assert_eq!(g.map(|g| g.protocol()), Some(Protocols::Kitty));
        assert!(Graphics::from_answers(&env(), b"", None).is_none());
    }

    #[test]
    fn keys_typed_while_the_terminal_answers_are_kept() {
        let bytes = answers(&[
            b"hi",
            KITTY_OK,
            b"\r",
            DA_SIXEL,
            b"\x03",
            CELL,
            b"\x7f\xc3\xa9",
            STATUS,
            b"\x1b",
        ]);
        let keys: Vec<Event> = typed_keys(&bytes);
        let expected: Vec<Event> = [
            KeyEvent::from(KeyCode::Char('h')),
            KeyEvent::from(KeyCode::Char('i')),
            KeyEvent::from(KeyCode::Enter),
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            KeyEvent::from(KeyCode::Backspace),
            KeyEvent::from(KeyCode::Char('é')),
            KeyEvent::from(KeyCode::Esc),
        ]
        .into_iter()
        .map(Event::Key)
        .collect();
        assert_eq!(keys, expected);
        // An arrow key (a sequence) and an OSC string are dropped, not typed.
        assert!(typed_keys(b"\x1b[A\x1b]11;rgb:0/0/0\x07\x1b_Gi=31;OK\x1b\\").is_empty());
    }

    #[test]
    fn multiplexers_and_the_switch_are_never_asked() {
        assert!(env().worth_asking());
        for e in [
            TermEnv {
                multiplexer: true,
                ..env()
            },
            TermEnv {
                term: "tmux-256color".into(),
                ..env()
            },
            TermEnv {
                term: "screen".into(),
                ..env()
            },
            TermEnv {
                disabled: true,
                ..env()
            },
        ] {
            assert!(!e.worth_asking(), "{e:?}");
        }
    }

    #[test]
    fn a_png_is_encoded_for_each_protocol_and_bad_data_is_a_reason() {
        let image = ToolImage {
            mime_type: "image/png".into(),
            data: PNG.into(),
        };
        for protocol in [Protocols::Kitty, Protocols::Sixel, Protocols::Iterm2] {
            let g = Graphics::new(protocol, Size::new(10, 20));
            let card = g.encode(&image, 40).expect("encodes");
            assert!(
                card.size().width >= 1 && card.size().height >= 1,
                "{protocol:?}"
            );
            assert!(card.size().height <= MAX_IMAGE_ROWS);
        }
        let g = Graphics::new(Protocols::Kitty, Size::new(10, 20));
        let bad = ToolImage {
            mime_type: "image/png".into(),
            data: "not base64!".into(),
        };
        assert!(matches!(g.encode(&bad, 40), Err(ImageError::Base64(_))));
        let truncated = ToolImage {
            mime_type: "image/png".into(),
            data: PNG[..40].into(),
        };
        assert!(g.encode(&truncated, 40).is_err());
        let unknown = ToolImage {
            mime_type: "image/x-nothing".into(),
            data: "AAAA".into(),
        };
        assert!(
            g.encode(&unknown, 40)
                .unwrap_err()
                .to_string()
                .contains("image/x-nothing")
        );
    }

    #[test]
    fn a_kitty_image_is_transmitted_into_the_buffer_where_it_fits() {
        let g = Graphics::new(Protocols::Kitty, Size::new(10, 20));
        let image = ToolImage {
            mime_type: "image/png".into(),
            data: PNG.into(),
        };
        let card = g.encode(&image, 40).unwrap();
        let area = Rect::new(0, 0, 20, 5);
        let mut buf = Buffer::empty(area);
        card.render(2, 1, area, &mut buf);
        let symbols: String = buf.content().iter().map(|c| c.symbol()).collect();
        assert!(
            symbols.contains("\x1b_G"),
            "the transmission is in the buffer"
        );
        // Past the bottom: not drawn at all.
        let mut clipped = Buffer::empty(area);
        card.render(2, 5, area, &mut clipped);
        assert_eq!(clipped, Buffer::empty(area));
    }
}

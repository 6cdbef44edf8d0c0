//! Integer arithmetic of literals (`$((1))`, `$((-1))`, `${x:0:3}`'s bounds): enough to
//! know a number the command spells as a sum, not a general evaluator. Anything else
//! (a variable, a comparison, an assignment) is unknown.

/// How deeply parentheses may nest in an expression the guard evaluates.
const MAX_DEPTH: usize = 32;

/// The value of `expr`, when it is integer arithmetic of literals.
pub(crate) fn eval(expr: &str) -> Option<i64> {
    let tokens = tokens(expr)?;
    let mut parser = Parser { tokens, at: 0 };
    let value = parser.sum(0)?;
    (parser.at == parser.tokens.len()).then_some(value)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Number(i64),
    Op(char),
}

fn tokens(expr: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\n' => {
                chars.next();
            }
            '0'..='9' => {
                let mut n: i64 = 0;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                    n = n.checked_mul(10)?.checked_add(i64::from(d))?;
                    chars.next();
                }
                out.push(Token::Number(n));
            }
            '+' | '-' | '*' | '/' | '%' | '(' | ')' => {
                out.push(Token::Op(c));
                chars.next();
            }
            _ => return None,
        }
    }
    Some(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.at).copied()
    }

    fn sum(&mut self, depth: usize) -> Option<i64> {
        let mut value = self.product(depth)?;
        while let Some(Token::Op(op @ ('+' | '-'))) = self.peek() {
            self.at += 1;
            let right = self.product(depth)?;
            value = match op {
                '+' => value.checked_add(right)?,
                _ => value.checked_sub(right)?,
            };
        }
        Some(value)
    }

    fn product(&mut self, depth: usize) -> Option<i64> {
        let mut value = self.unary(depth)?;
        while let Some(Token::Op(op @ ('*' | '/' | '%'))) = self.peek() {
            self.at += 1;
            let right = self.unary(depth)?;
            value = match op {
                '*' => value.checked_mul(right)?,
                '/' => value.checked_div(right)?,
                _ => value.checked_rem(right)?,
            };
        }
        Some(value)
    }

    fn unary(&mut self, depth: usize) -> Option<i64> {
        match self.peek()? {
            Token::Op('-') => {
                self.at += 1;
                self.unary(depth)?.checked_neg()
            }
            Token::Op('+') => {
                self.at += 1;
                self.unary(depth)
            }
            Token::Op('(') if depth < MAX_DEPTH => {
                self.at += 1;
                let value = self.sum(depth + 1)?;
                (self.peek()? == Token::Op(')')).then_some(())?;
                self.at += 1;
                Some(value)
            }
            Token::Number(n) => {
                self.at += 1;
                Some(n)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eval;

    #[test]
    fn literals_and_sums() {
        assert_eq!(eval("1"), Some(1));
        assert_eq!(eval("-1"), Some(-1));
        assert_eq!(eval(" 2 * (3 - 4) "), Some(-2));
        assert_eq!(eval("0-1"), Some(-1));
        assert_eq!(eval("x + 1"), None);
        assert_eq!(eval("1 / 0"), None);
        assert_eq!(eval("(1"), None);
    }
}

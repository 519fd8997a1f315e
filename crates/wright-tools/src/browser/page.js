// wright's view of a page, installed in the page by the `browser` tool: `read` renders it
// as compact text with its interactive elements numbered ([n]), and the actions find an
// element again by that number. Nothing here sends anything anywhere.
(() => {
  if (window.__wright) return;
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME", "HEAD", "META", "LINK"]);
  const BLOCK = new Set(["P", "DIV", "SECTION", "ARTICLE", "MAIN", "HEADER", "FOOTER", "NAV", "ASIDE", "UL", "OL", "LI", "TABLE", "TR", "FORM", "FIELDSET", "H1", "H2", "H3", "H4", "H5", "H6", "PRE", "BLOCKQUOTE", "BR", "HR", "DL", "DT", "DD", "FIGURE", "LABEL"]);
  const squash = (s) => (s || "").replace(/\s+/g, " ").trim();
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const interactive = (el) => {
    const tag = el.tagName;
    if (tag === "A" && el.hasAttribute("href")) return true;
    if (["BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY"].includes(tag)) return true;
    const role = el.getAttribute("role");
    if (["button", "link", "checkbox", "radio", "tab", "menuitem", "switch", "option", "textbox"].includes(role)) return true;
    return el.hasAttribute("onclick") || el.isContentEditable && !el.parentElement?.isContentEditable;
  };
  const hidden = (el) => {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return true;
    if (el.tagName === "INPUT" && el.type === "hidden") return true;
    const style = getComputedStyle(el);
    return style.display === "none" || style.visibility === "hidden";
  };
  const label = (el) => {
    const aria = el.getAttribute("aria-label") || el.getAttribute("title");
    if (aria) return squash(aria);
    if (el.id) {
      const l = document.querySelector(`label[for="${CSS.escape(el.id)}"]`);
      if (l) return squash(l.innerText);
    }
    return squash(el.innerText || el.value || el.getAttribute("alt") || "");
  };
  const describe = (el, n) => {
    const tag = el.tagName;
    if (tag === "A") {
      const href = el.getAttribute("href") || "";
      return `[${n}] link "${clip(label(el), 80)}"${href && !href.startsWith("javascript:") ? " → " + clip(href, 80) : ""}`;
    }
    if (tag === "INPUT" || tag === "TEXTAREA") {
      const type = tag === "TEXTAREA" ? "textarea" : el.type || "text";
      const parts = [`[${n}] ${type === "submit" || type === "button" ? "button" : "input " + type}`];
      const name = label(el) || el.name || el.placeholder;
      if (name) parts.push(`"${clip(squash(name), 60)}"`);
      if (["checkbox", "radio"].includes(type)) parts.push(el.checked ? "(checked)" : "(unchecked)");
      else if (type !== "password" && el.value && type !== "submit" && type !== "button") parts.push(`= "${clip(el.value, 80)}"`);
      return parts.join(" ");
    }
    if (tag === "SELECT") {
      const options = Array.from(el.options).map((o) => clip(squash(o.text), 30));
      const chosen = el.selectedOptions[0] ? squash(el.selectedOptions[0].text) : "";
      return `[${n}] select "${clip(chosen, 40)}" of: ${clip(options.join(" | "), 200)}`;
    }
    const role = el.getAttribute("role") || (tag === "BUTTON" || tag === "SUMMARY" ? "button" : "clickable");
    return `[${n}] ${role} "${clip(label(el), 80)}"`;
  };
  const read = (maxChars) => {
    const els = [];
    const out = [];
    let line = "";
    const flush = () => {
      const t = squash(line);
      if (t && out[out.length - 1] !== t) out.push(t);
      line = "";
    };
    const walk = (node) => {
      if (node.nodeType === Node.TEXT_NODE) {
        line += " " + node.textContent;
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const el = node;
      if (SKIP.has(el.tagName.toUpperCase()) || hidden(el)) return;
      if (interactive(el)) {
        els.push(el);
        if (["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName)) {
          line += " " + describe(el, els.length) + " ";
        } else {
          flush();
          out.push(describe(el, els.length));
        }
        return;
      }
      const block = BLOCK.has(el.tagName);
      if (block) flush();
      const heading = /^H[1-6]$/.test(el.tagName);
      if (heading) line += "#".repeat(Number(el.tagName[1])) + " ";
      for (const child of el.childNodes) walk(child);
      if (block) flush();
    };
    if (document.body) walk(document.body);
    flush();
    window.__wrightEls = els;
    let text = out.join("\n");
    if (text.length > maxChars) {
      text = text.slice(0, maxChars) + `\n[… ${text.length - maxChars} more characters not shown]`;
    }
    return text;
  };
  const element = (n) => {
    const el = (window.__wrightEls || [])[n - 1];
    if (!el) throw new Error(`no element [${n}] on this page: read the page again`);
    if (!el.isConnected) throw new Error(`element [${n}] is gone from the page: read the page again`);
    return el;
  };
  const setValue = (el, value) => {
    const proto = el.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype : el.tagName === "SELECT" ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, "value").set;
    setter.call(el, value);
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
  };
  window.__wright = {
    read,
    click: (n) => {
      const el = element(n);
      el.scrollIntoView({ block: "center" });
      el.click();
      return describe(el, n);
    },
    type: (n, text) => {
      const el = element(n);
      el.focus();
      if (el.isContentEditable) {
        el.textContent = text;
        el.dispatchEvent(new Event("input", { bubbles: true }));
      } else {
        setValue(el, text);
      }
      return describe(el, n);
    },
    focus: (n) => {
      element(n).focus();
    },
    select: (n, choice) => {
      const el = element(n);
      if (el.tagName !== "SELECT") throw new Error(`element [${n}] is not a select`);
      const want = squash(choice).toLowerCase();
      const option = Array.from(el.options).find((o) => squash(o.text).toLowerCase() === want || o.value.toLowerCase() === want);
      if (!option) throw new Error(`[${n}] has no option "${choice}"`);
      setValue(el, option.value);
      return describe(el, n);
    },
    has: (text, selector) => {
      if (selector) {
        try {
          return document.querySelector(selector) !== null;
        } catch (e) {
          throw new Error(`not a CSS selector: ${selector}`);
        }
      }
      return (document.body ? document.body.innerText : "").includes(text);
    },
  };
})();

const { addDays } = require("./dates");

// An invoice, payable within `termDays` days of its date.
class Invoice {
  constructor(number, date, termDays = 30) {
    this.number = number;
    this.date = date;
    this.termDays = termDays;
  }

  dueDate() {
    return addDays(this.date, this.termDays);
  }

  describe() {
    return `Invoice ${this.number}, dated ${this.date}, due ${this.dueDate()}`;
  }
}

module.exports = { Invoice };
